-- rw-extend: set the remaining lease of one holder of a read-write lock.
-- KEYS[1] lock hash   KEYS[2] lease ends (sorted set, _rw-state.lua)
-- ARGV[1] owner id    ARGV[2] lease ms
-- Returns {1, leaseMs} on success, {-1} when nobody holds, {-2} when others hold but not this
--         owner, or the key holds data these scripts did not write.
local lockKey, expiryKey = KEYS[1], KEYS[2]
local owner, leaseMs = ARGV[1], tonumber(ARGV[2])

-- @include rwstate

local state = readState(owner)
if not state then return {-2} end
purge(state, owner)
if not state.mine then
  if anyHolder() then return {-2} end
  return {-1}
end
redis.call('ZADD', expiryKey, nowMs() + leaseMs, owner)
settle()
return {1, leaseMs}
