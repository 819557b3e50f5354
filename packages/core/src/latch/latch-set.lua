-- latch-set: set the latch's count while it is 0 (or never set, or expired).
-- KEYS[1] latch hash   KEYS[2] request records (sorted set; see _latch.lua for both)
-- ARGV[1] request id (one per call, kept by its resends)   ARGV[2] channel
-- ARGV[3] ttl ms (the keys expire this long after a change, request records with them)
-- ARGV[4] keep ms (how long a request id is remembered, so a resend is recognised)
-- ARGV[5] the count
-- Returns {1} set (or a resend of a request that set it), {0, count} still counting,
--         {-3} a key holds data this script did not write (never modified).
local latchKey, requestsKey = KEYS[1], KEYS[2]
local requestId, channel, ttlMs, keepMs = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])

-- @include latch

forgetExpired()
if record then return {1} end
if count and count > 0 then return {0, count} end
remember(tonumber(ARGV[5]), 's', false)
return {1}
