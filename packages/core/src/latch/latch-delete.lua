-- latch-delete: delete both keys of the latch; its waiters then read 0.
-- KEYS[1] latch hash   KEYS[2] request records (sorted set; see _latch.lua for both)
-- ARGV[1] channel
-- Returns {1} deleted, {0} there was no latch,
--         {-3} a key holds data this script did not write (never modified).
--
-- Why: the waiters are woken before the keys go: stopped between, they read the count again.
local latchKey, requestsKey, requestId, channel = KEYS[1], KEYS[2], '', ARGV[1]

-- @include latch

if not count then return {0} end
-- Waiters read 0 now (as for a latch never set): they return.
if count > 0 then publish('z') end
redis.call('DEL', latchKey, requestsKey)
return {1}
