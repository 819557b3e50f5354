-- latch-read: the latch's count and time to live.
-- KEYS[1] latch hash   KEYS[2] request records (sorted set; see _latch.lua for both)
-- ARGV    none
-- Returns {count, pttl} (0 for a latch never set or expired),
--         {-3} a key holds data this script did not write.
local latchKey, requestsKey, requestId = KEYS[1], KEYS[2], ''

-- @include latch

return {count or 0, redis.call('PTTL', latchKey)}
