-- barrier-wait: renew a waiting party's lease, and report where its arrival stands.
-- KEYS[1] barrier hash   KEYS[2] waiting parties   KEYS[3] arrival records (see _barrier.lua)
-- ARGV[1] party id   ARGV[2] channel   ARGV[3] lease ms
-- ARGV[4] keep ms (how long an arrival is remembered past its lease)
-- ARGV[5] ttl ms of the keys after this call   ARGV[6] '1' when the lease ends when the wait does
-- Returns {0, generation, otherMs}, {1, generation} or {2, generation, reason, by}, as
--         barrier-arrive; {3} no arrival of this party is known (never, or forgotten);
--         {-3} a key holds data this script did not write.
local partyId, channel = ARGV[1], ARGV[2]
local leaseMs, keepMs = tonumber(ARGV[3]), tonumber(ARGV[4])

-- @include barrier

begin(tonumber(ARGV[5]) or 0, leaseMs + keepMs)
local E, G = arrival()
if not E then return {3} end
local outcome = settled(E, G)
if outcome then return outcome end
local endsAt = nowMs() + leaseMs
keep(hashKey)
redis.call('ZADD', partiesKey, 'XX', endsAt, partyId)
redis.call('ZADD', recordsKey, 'inf', MARK, endsAt + keepMs, partyId)
keep(partiesKey)
keep(recordsKey)
if ARGV[6] == '1' and string.sub(record, -2) ~= '|t' then redis.call('HSET', hashKey, 'r:' .. partyId, E .. '|' .. G .. '|t') end
return stillWaiting(G)
