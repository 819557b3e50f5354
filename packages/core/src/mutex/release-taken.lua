-- release-taken: the last release of a hold take.lua granted (a lock taken
-- free, with nobody queued), sent with the 2 KEYS and 1 ARGV that freeing it
-- touches while nobody queues: each element left out saves the server a Lua
-- string and a table slot. A queue that formed meanwhile needs a hand-off,
-- with the waiter table, the fence counter, the channel and the claim: the
-- script then writes nothing and answers nil, and the caller sends
-- release-all.lua. No request id, as release-all.lua.
-- KEYS[1] lock hash   KEYS[2] waiter queue
-- ARGV[1] owner id
-- Returns 0 when the lock left this owner (a bare integer: no array to build),
--         nil when waiters are queued (nothing written: release-all.lua next),
--         {-1} when the lock is gone, {-2} when another owner holds it,
--         {-3} when the key holds data these scripts did not write (never modified).
local lockKey = KEYS[1]

if redis.call('EXISTS', KEYS[2]) == 1 then return false end
-- The owner's field (its hold count) is there only while this owner holds
-- the lock, an owner id being new for every acquisition. (An HDEL of the
-- owner's and the token's fields, which frees the key with them, costs the
-- server more than this HGET and DEL.)
local held = redis.pcall('HGET', lockKey, ARGV[1])
if type(held) == 'string' then
  redis.call('DEL', lockKey)
  return 0
end

-- @include lockstate

local _, token, _, foreign = readLock(ARGV[1])
if foreign then return {-3} end
if token then return {-2} end
return {-1}
