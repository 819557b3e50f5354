-- extend: set the remaining lease of a lock this owner holds.
-- KEYS[1] lock (a hash, or take.lua's string)
-- ARGV[1] owner id   ARGV[2] lease ms
-- Returns {1, pttl} on success, {-1} when the lock is gone, {-2} when another owner holds it
--         or the key holds data these scripts did not write (busy, never an error).
local lockKey, owner, leaseMs = KEYS[1], ARGV[1], tonumber(ARGV[2])

-- @include takenlock

local held = redis.pcall('HEXISTS', lockKey, owner)
if held == 1 or (type(held) == 'table' and takenBy(lockKey, owner)) then
  redis.call('PEXPIRE', lockKey, leaseMs)
  return {1, leaseMs}
end
if redis.call('EXISTS', lockKey) == 1 then return {-2} end
return {-1}
