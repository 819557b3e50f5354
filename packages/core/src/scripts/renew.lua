-- renew: extend many held locks in one call (the watchdog's tick). Never
-- re-creates a lock: a hash whose owner field is not ours is left alone.
-- KEYS[1..n]  lock hashes (one hash slot per call on Cluster)
-- ARGV[1]     lease ms
-- ARGV[2..n+1] owner id for KEYS[i]
-- Returns a list, one entry per key: 1 renewed, -1 gone, -2 held by another owner.
local leaseMs = tonumber(ARGV[1])
local result = {}
for i, lockKey in ipairs(KEYS) do
  if redis.call('HEXISTS', lockKey, ARGV[i + 1]) == 1 then
    redis.call('PEXPIRE', lockKey, leaseMs)
    result[i] = 1
  elseif redis.call('EXISTS', lockKey) == 1 then
    result[i] = -2
  else
    result[i] = -1
  end
end
return result
