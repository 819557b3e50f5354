-- release-taken: Redlock's last release of a hold take.lua granted, while the lock is still
-- the string take.lua wrote (a Lock's goes to release-all.lua with the string).
-- KEYS[1] lock
-- ARGV[1] the string lock take.lua wrote for this hold (owner id '@' request id '|' token)
-- Returns 0 when the lock left this owner,
--         nil when the lock is a hash (nothing written: release.lua next, which publishes
--           to Redlock's waiters, who never queue),
--         {-1} when the lock is gone, {-2} when another owner holds it,
--         {-3} when the key holds data these scripts did not write (never modified).
--
-- Why: whatever needs more than the one hold take.lua wrote (a waiter queueing, a second hold,
-- a raised token) turns the string into the hash first (_lock-state.lua's hashLock), so a
-- string lock of this owner has nobody queued: one GET compared with the string the client
-- knows decides, without the queue key. A hash needs release.lua. No request id, as
-- release-all.lua. Part of the string layout that ARCHITECTURE.md's measurement keeps.
local lockKey = KEYS[1]

-- On a key of another type (the hash among them) the reply is an error table.
local value = redis.pcall('GET', lockKey)
if value == ARGV[1] then
  redis.call('DEL', lockKey)
  return 0
end
if type(value) == 'string' then
-- @include takenlock
  if parseTaken(value) then return {-2} end
  return {-3}
end
if value then return false end
return {-1}
