-- rw-renew: extend many read-write lock holds in one call (the watchdog's tick).
-- KEYS[2i-1], KEYS[2i] the lock hash and its lease ends (sorted set) of hold i
--                      (one hash slot per call on Cluster)
-- ARGV[1] lease ms
-- ARGV[2] the owner id of each hold, in order, separated by single spaces
-- Returns a list, one entry per hold: 1 renewed, -1 gone, -2 held by others only, or by data
--         these scripts did not write.
--
-- Why: never re-creates a hold: a holder that is gone or past its lease is lost. A renewal
-- writes the holder's own lease end (and the keys' TTL when it is the longest), never reads
-- every holder.
local leaseMs = tonumber(ARGV[1])
local lockKey, expiryKey

-- @include rwstate
-- @include reneweach

return renewEach('rw-renew', 2, function(owner, i)
  lockKey, expiryKey = KEYS[2 * i - 1], KEYS[2 * i]
  local score = redis.pcall('ZSCORE', expiryKey, owner)
  if isWrongType(score, 'ZSCORE', expiryKey, owner) then return -2 end
  if not score and redis.call('EXISTS', lockKey, expiryKey) == 1 and redis.call('EXISTS', expiryKey) == 0 then
    -- A hash of the previous layout: converted once, then renewed as any.
    if convert() then score = redis.call('ZSCORE', expiryKey, owner) end
  end
  if score and tonumber(score) > nowMs() then
    redis.call('ZADD', expiryKey, nowMs() + leaseMs, owner)
    if redis.call('PTTL', expiryKey) < leaseMs then
      redis.call('PEXPIRE', expiryKey, leaseMs)
      redis.call('PEXPIRE', lockKey, leaseMs)
    end
    return 1
  end
  return redis.call('EXISTS', lockKey) == 1 and -2 or -1
end)
