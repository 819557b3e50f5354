-- semaphore-renew: extend many semaphore holders in one call (the watchdog's tick).
-- KEYS[1..n] holder expiry zsets (one hash slot per call on Cluster)
-- ARGV[1]    lease ms
-- ARGV[2]    the owner id of each of KEYS[1..n], in order, separated by single spaces
-- Returns a list, one entry per key: 1 renewed, -1 gone (expired or removed),
--         -2 a key holding data these scripts did not write.
--
-- Why: never re-creates a holder: one whose lease already ended by server time is left to
-- the purge.
local leaseMs = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

-- @include reneweach

return renewEach('semaphore-renew', 1, function(owner, i)
  local expiryKey = KEYS[i]
  local score = redis.pcall('ZSCORE', expiryKey, owner)
  if type(score) == 'table' and score.err then
    -- Another type at the key is foreign data; any other error (a missing
    -- ACL permission) fails the call, as it would for the mutex's renew.
    if not string.find(score.err, 'WRONGTYPE', 1, true) then return error(score) end
    return -2
  end
  if score and tonumber(score) > now then
    redis.call('ZADD', expiryKey, now + leaseMs, owner)
    return 1
  end
  return -1
end)
