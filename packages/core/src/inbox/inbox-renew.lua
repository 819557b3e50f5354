-- inbox renew: keeps a processor's lease on a key (never shortening it) and the index's record of it.
-- KEYS[1] lease   KEYS[2] index
-- ARGV[1] owner   ARGV[2] token   ARGV[3] lease ms   ARGV[4] the key (index member)
-- Returns 1 when the lease is this processor's (its ttl now at least lease ms),
--         0 when it is gone (expired), -1 when another processor's, -3 foreign data (never modified).
--
-- Why: the index holds when each key's lease ends, so recover() finds the keys whose processor
-- died by their score alone, without reading any other key.
-- @include now
-- @include wrongtype
local leaseKey, indexKey = KEYS[1], KEYS[2]
local owner, token, leaseMs, member = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]

local lease = redis.pcall('GET', leaseKey)
if isWrongType(lease, 'GET', leaseKey) then return -3 end
if not lease then return 0 end
if not string.match(lease, '^i1|%d+|.+$') then return -3 end
if lease ~= 'i1|' .. token .. '|' .. owner then return -1 end
local pttl = redis.call('PTTL', leaseKey)
if pttl < leaseMs then
  redis.call('PEXPIRE', leaseKey, leaseMs)
  pttl = leaseMs
end
redis.call('ZADD', indexKey, 'XX', nowMs() + pttl, member)
return 1
