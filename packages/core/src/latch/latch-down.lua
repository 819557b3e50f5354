-- latch-down: count the latch down by one.
-- KEYS[1] latch hash   KEYS[2] request records (sorted set; see _latch.lua for both)
-- ARGV[1] request id (one per call, kept by its resends)   ARGV[2] channel
-- ARGV[3] ttl ms (the keys expire this long after a change, request records with them)
-- ARGV[4] keep ms (how long a request id is remembered, so a resend is recognised)
-- Returns {count after it, 1, pttl} (a resend gets the count its first run left),
--         {0, 0, pttl} at 0 or never set (nothing counted down, nothing recorded),
--         {-3} a key holds data this script did not write (never modified).
--
-- Why: the count-down that reaches 0 wakes every waiter (_latch.lua's remember).
local latchKey, requestsKey = KEYS[1], KEYS[2]
local requestId, channel, ttlMs, keepMs = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])

-- @include latch

forgetExpired()
if record then return {tonumber(record) or 0, 1, redis.call('PTTL', latchKey)} end
if not count or count == 0 then return {0, 0, redis.call('PTTL', latchKey)} end
count = count - 1
remember(count, count, count == 0)
return {count, 1, ttlMs}
