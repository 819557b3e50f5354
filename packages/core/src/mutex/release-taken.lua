-- release-taken: the last release of a hold take.lua granted (a lock taken
-- free, with nobody queued), sent with the 1 KEY and 1 ARGV that freeing it
-- touches while nobody queues: each element left out saves the server a Lua
-- string and a table slot. Whether anyone queued since is in the hash itself:
-- the waiter that creates the queue marks the lock's hash first ('.', see
-- _queue-entry.lua), and the queue did not exist when take.lua granted this
-- hold, so an unmarked hash means no queue, without a read of the queue key.
-- A marked one needs a hand-off, with the queue, the waiter table, the fence
-- counter, the channel and the claim: the script then writes nothing and
-- answers nil, and the caller sends release-all.lua. No request id, as
-- release-all.lua.
-- KEYS[1] lock hash
-- ARGV[1] owner id
-- Returns 0 when the lock left this owner (a bare integer: no array to build),
--         nil when a waiter may be queued (nothing written: release-all.lua next),
--         {-1} when the lock is gone, {-2} when another owner holds it,
--         {-3} when the key holds data these scripts did not write (never modified).
local lockKey = KEYS[1]

-- One read: the owner's field (its hold count) is there only while this
-- owner holds the lock, an owner id being new for every acquisition; the
-- mark tells whether a waiter queued. (An HDEL of the owner's and the token's
-- fields, which frees the key with them, costs the server more than a read
-- and a DEL.) On a key of another type the reply is an error table, with
-- neither element: readLock below reports it.
local held = redis.pcall('HMGET', lockKey, ARGV[1], '.')
if held[2] then return false end
if held[1] then
  redis.call('DEL', lockKey)
  return 0
end

-- @include lockstate

local _, token, _, foreign = readLock(ARGV[1])
if foreign then return {-3} end
if token then return {-2} end
return {-1}
