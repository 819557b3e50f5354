-- release-taken: the last release of a hold take.lua granted (a lock taken
-- free, with nobody queued), sent with the 1 KEY and 1 ARGV that freeing it
-- touches while nobody queues: each element left out saves the server a Lua
-- string and a table slot. take.lua wrote the lock as a string
-- (_taken-lock.lua), and whatever needs more than that one hold (a waiter
-- queueing, a second hold, a raised token) turns it into the hash first: a
-- string lock of this owner therefore has nobody queued, and one GET
-- compared with the string the client knows tells, without a read of the
-- queue key. A hash needs release-all.lua (a hand-off,
-- with the queue, the waiter table, the fence counter, the channel and the
-- claim): the script then writes nothing and answers nil. No request id, as
-- release-all.lua.
-- KEYS[1] lock
-- ARGV[1] the string lock take.lua wrote for this hold (owner id '@' request id '|' token)
-- Returns 0 when the lock left this owner (a bare integer: no array to build),
--         nil when the lock is a hash (nothing written: release-all.lua next),
--         {-1} when the lock is gone, {-2} when another owner holds it,
--         {-3} when the key holds data these scripts did not write (never modified).
local lockKey = KEYS[1]

-- On a key of another type (the hash among them) the reply is an error table.
-- The fragment below is inlined where it is used: its functions are built
-- only on that rare path (each is a new closure on every call).
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
