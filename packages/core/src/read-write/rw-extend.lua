-- rw-extend: set the remaining lease of one holder of a read-write lock.
-- KEYS[1] lock hash
-- ARGV[1] owner id    ARGV[2] lease ms
-- Returns {1, leaseMs} on success, {-1} when nobody holds, {-2} when others
-- hold but not this owner, or the key holds data these scripts did not write.
local lockKey, owner, leaseMs = KEYS[1], ARGV[1], tonumber(ARGV[2])

-- @include rwstate

local holders, _, n = loadHolders(true)
if not holders then return {-2} end
local mine = holders[owner]
if not mine then
  if n > 0 then return {-2} end
  return {-1}
end
mine.expiresAt = nowMs() + leaseMs
saveHolder(owner, mine)
settle(holders)
return {1, leaseMs}
