-- renew: extend many held locks in one call (the watchdog's tick).
-- KEYS[1..n] locks (a hash or take.lua's string; one hash slot per call on Cluster)
-- ARGV[1]    lease ms
-- ARGV[2]    the owner id of each of KEYS[1..n], in order, separated by single spaces
-- Returns a list, one entry per key: 1 renewed, -1 gone, -2 held by another owner or by data
--         these scripts did not write.
--
-- Why: never re-creates a lock: one that is not this owner's is left alone. pcall: a value of
-- another type at one key must not fail the renewals of the others.
local leaseMs = tonumber(ARGV[1])

-- @include takenlock
-- @include reneweach

return renewEach('renew', 1, function(owner, i)
  local lockKey = KEYS[i]
  local held = redis.pcall('HEXISTS', lockKey, owner)
  if held == 1 or (type(held) == 'table' and takenBy(lockKey, owner)) then
    redis.call('PEXPIRE', lockKey, leaseMs)
    return 1
  end
  return redis.call('EXISTS', lockKey) == 1 and -2 or -1
end)
