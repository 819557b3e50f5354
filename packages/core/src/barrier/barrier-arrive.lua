-- barrier-arrive: a party arrives, and waits with a lease (or trips its generation).
-- KEYS[1] barrier hash   KEYS[2] waiting parties   KEYS[3] arrival records (see _barrier.lua)
-- ARGV[1] party id (one per arrival, kept by its resends)   ARGV[2] channel
-- ARGV[3] lease ms   ARGV[4] the caller's party count
-- ARGV[5] keep ms (how long an arrival is remembered past its lease)
-- ARGV[6] ttl ms of the keys after this call   ARGV[7] '1' when the lease ends when the wait does
-- Returns {0, generation, otherMs}      still waiting (otherMs: ms until the earliest lease end
--                                       of another waiting party, -1 when there is none)
--         {1, generation}               its generation tripped (by this arrival, or earlier)
--         {2, generation, reason, by}   its generation was broken, by party `by`
--         {-4, stored}                  the stored party count is another
--         {-3}                          a key holds data this script did not write
--
-- Why: a resend of an arrival already made gets the same answer, never a second arrival.
local partyId, channel = ARGV[1], ARGV[2]
local leaseMs, count, keepMs = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

-- @include barrier

begin(tonumber(ARGV[6]) or 0, leaseMs + keepMs)
local E, G = arrival()
if E then return settled(E, G) or stillWaiting(G) end
if p and p ~= count then return {-4, p} end
keep(hashKey)
if not p then
  redis.call('DEL', partiesKey)
  p, e, g = count, 0, 0
  redis.call('HSET', hashKey, 'p', p, 'e', e, 'g', g)
  keep(hashKey)
end
local endsAt = nowMs() + leaseMs
local first = redis.call('ZRANGE', partiesKey, 0, 0, 'WITHSCORES')
redis.call('ZADD', recordsKey, 'inf', MARK, endsAt + keepMs, partyId)
keep(recordsKey)
redis.call('HSET', hashKey, 'r:' .. partyId, e .. '|' .. g .. (ARGV[7] == '1' and '|t' or ''))
redis.call('ZADD', partiesKey, 'inf', MARK, endsAt, partyId)
keep(partiesKey)
G = g
if atLeast(p) then
  advance(nil, nil)
  return {1, G}
end
-- A lease that ends before every waiting party's: they wake to watch it too.
if first[1] and first[1] ~= MARK and tonumber(first[2]) > endsAt then publish('a') end
return stillWaiting(G)
