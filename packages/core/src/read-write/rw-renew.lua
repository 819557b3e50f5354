-- rw-renew: extend many read-write lock holds in one call (the watchdog's
-- tick). Never re-creates a hold: a field that is gone or past its lease is lost.
-- KEYS[1..n]  lock hashes (one hash slot per call on Cluster)
-- ARGV[1]     lease ms
-- ARGV[2]     the owner id of each of KEYS[1..n], in order, separated by single spaces
-- Returns a list, one entry per key: 1 renewed, -1 gone, -2 held by others only,
-- or by data these scripts did not write.
local leaseMs = tonumber(ARGV[1])
local lockKey

-- @include rwstate

local result = {}
local i = 0
for owner in string.gmatch(ARGV[2], '[^ ]+') do
  i = i + 1
  lockKey = KEYS[i]
  if not lockKey then break end
  local value = redis.pcall('HGET', lockKey, owner)
  local h = type(value) == 'string' and parseHolder(value)
  if h and h.expiresAt > nowMs() then
    h.expiresAt = nowMs() + leaseMs
    saveHolder(owner, h)
    if redis.call('PTTL', lockKey) < leaseMs then redis.call('PEXPIRE', lockKey, leaseMs) end
    result[i] = 1
  elseif redis.call('EXISTS', lockKey) == 1 then
    result[i] = -2
  else
    result[i] = -1
  end
end
if i ~= #KEYS then
  return redis.error_reply('ERR rw-renew: ' .. #KEYS .. ' keys but ' .. i .. ' owner ids')
end
return result
