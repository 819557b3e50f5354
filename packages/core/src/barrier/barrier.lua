-- barrier: every operation of a cyclic barrier ('arrive', 'wait', 'leave', 'parties', 'read').
-- KEYS[1] barrier hash: 'p' -> party count, 'e' -> epoch (+1 per trip or break),
--         'g' -> generation (+1 per trip), 'x:<epoch>' -> '<reason>|<party id>' of a broken
--         epoch (the last 100), 'r:<party id>' -> '<epoch>|<generation>' of its arrival,
--         '<epoch>|<generation>|t' once its lease ends when its wait does
-- KEYS[2] waiting parties (sorted set): '#' -> +inf (the mark, _marked-set.lua),
--         party id -> server time (ms) its lease ends
-- KEYS[3] arrival records (sorted set): '#' -> +inf, party id -> server time its 'r:' field may go
-- ARGV[1] operation: 'arrive', 'wait' (renews the party's lease and looks), 'leave' (the party
--         gives up: breaks its generation), 'parties' (stores a new count), 'read'
-- ARGV[2] party id (one per arrival; '' for 'parties' and 'read')   ARGV[3] channel
-- ARGV[4] 'arrive', 'wait': lease ms; 'leave': the reason; 'parties': the new count
-- ARGV[5] 'arrive': the caller's party count
-- ARGV[6] 'arrive', 'wait': keep ms (how long an arrival is remembered past its lease)
-- ARGV[7] 'arrive', 'wait', 'parties': ttl ms of the keys after this call
-- ARGV[8] 'arrive', 'wait': '1' when this lease ends when the party's wait does
-- Returns, for 'arrive', 'wait' and 'leave':
--   {0, generation, otherMs}      still waiting (otherMs: ms until the earliest lease end of
--                                 another waiting party, -1 when there is none)
--   {1, generation}               its generation tripped (by this arrival, or earlier)
--   {2, generation, reason, by}   its generation was broken, by party `by`
--   {3}                           no arrival of this party is known (never, or forgotten)
--   {-4, stored}                  'arrive': the stored party count is another
-- 'parties': {previous count, -1 for a barrier never used};
-- 'read': {count or -1, generation, waiting};
-- {-3} for every operation when a key holds data this script did not write (never modified).
--
-- Why: one script, because every operation shares the reads and the purge. A party counts only
-- while its lease is live: every call first purges the ended leases (breaking their generation),
-- so a trip counts live parties only; a lease ended at its party's wait is 'timeout', else
-- 'lost'. Waiting parties are counted with ZRANGE by rank (the documented ACL has no ZCARD).
-- Stopped at any refused command, the barrier stays consistent: reads that can find foreign
-- data come before the first write; the first write (forgetting old arrivals) is harmless
-- alone; a key gets its TTL as it is written; an arrival is recorded before it is counted; a
-- generation ends by dropping its parties first, so none is counted again.
local hashKey, partiesKey, recordsKey = KEYS[1], KEYS[2], KEYS[3]
local op, partyId, channel = ARGV[1], ARGV[2], ARGV[3]
-- How many epochs back a break is remembered: a party reads how its epoch ended within a
-- renewal period of its lease, long before 100 more epochs can end.
local HISTORY = 100

-- @include publish
-- @include now
-- @include markedset

local state = redis.pcall('HMGET', hashKey, 'p', 'e', 'g', 'r:' .. partyId)
if isForeign(state) then return {-3} end
local p, e, g, record = state[1], state[2], state[3], state[4]
if p then
  p, e, g = tonumber(p), tonumber(e), tonumber(g)
  if not p or not e or not g then return {-3} end
elseif redis.call('EXISTS', hashKey) == 1 then
  return {-3}
end
if foreignSet(partiesKey) or foreignSet(recordsKey) then return {-3} end
local expired = redis.call('ZRANGEBYSCORE', partiesKey, '-inf', nowMs())
local forgotten = redis.call('ZRANGEBYSCORE', recordsKey, '-inf', nowMs(), 'LIMIT', 0, 100)
-- How the earliest lease that ended ended: at its party's waitMs (timed out), or unrenewed (lost).
local expiredWhy = 'lost'
if p and #expired > 0 then
  local ended = redis.call('HGET', hashKey, 'r:' .. expired[1])
  if ended and string.sub(ended, -2) == '|t' then expiredWhy = 'timeout' end
end
-- The keys' time to live after an arrival, a renewal or a count: the caller's ttl, and never less
-- than the last arrival record (which outlives its lease) is kept.
local keepFor = 1
if op == 'arrive' or op == 'wait' or op == 'parties' then
  -- The last record: the member before the mark.
  local last = redis.call('ZRANGE', recordsKey, -2, -2, 'WITHSCORES')
  keepFor = math.max(1, tonumber(ARGV[7]) or 0, last[2] and tonumber(last[2]) - nowMs() or 0)
  if op ~= 'parties' then keepFor = math.max(keepFor, tonumber(ARGV[4]) + tonumber(ARGV[6])) end
end
local function keep(key)
  redis.call('PEXPIRE', key, keepFor)
end

-- Arrivals whose resends and late looks can no longer come (at most 100 a call).
for _, id in ipairs(forgotten) do
  redis.call('HDEL', hashKey, 'r:' .. id)
  if id == partyId then record = nil end
end
if #forgotten > 0 then redis.call('ZREM', recordsKey, unpack(forgotten)) end

-- Ends the current epoch: tripped (no reason), or broken by party `by` for `reason`. Its parties
-- are dropped first: stopped after that, none of them counts again (each finds itself lost).
local function advance(reason, by)
  redis.call('DEL', partiesKey)
  if reason then
    redis.call('HSET', hashKey, 'e', e + 1, 'g', g, 'x:' .. e, reason .. '|' .. by)
  else
    redis.call('HSET', hashKey, 'e', e + 1, 'g', g + 1)
    g = g + 1
  end
  e = e + 1
  publish(reason and 'b' or 't')
  redis.call('HDEL', hashKey, 'x:' .. (e - HISTORY))
end

-- A party whose lease ended is no longer counted: its generation is broken, for every party in it.
if p and #expired > 0 then advance(expiredWhy, expired[1]) end

-- True when at least n parties wait (O(log N); the mark is last).
local function atLeast(n)
  local nth = redis.call('ZRANGE', partiesKey, n - 1, n - 1)[1]
  return nth ~= nil and nth ~= MARK
end

if op == 'read' then
  if not p then return {-1, 0, 0} end
  return {p, g, #redis.call('ZRANGEBYSCORE', partiesKey, '-inf', '(inf')}
end

if op == 'parties' then
  local n = tonumber(ARGV[4])
  keep(hashKey)
  if not p then
    redis.call('DEL', partiesKey)
    redis.call('HSET', hashKey, 'p', n, 'e', 0, 'g', 0)
    keep(hashKey)
    return {-1}
  end
  redis.call('HSET', hashKey, 'p', n)
  keep(partiesKey)
  keep(recordsKey)
  -- As many parties as the new count are waiting already: they are through.
  if atLeast(1) and atLeast(n) then advance(nil, nil) end
  return {p}
end

local function stillWaiting(G)
  local first = redis.call('ZRANGE', partiesKey, 0, 1, 'WITHSCORES')
  local otherMs = -1
  for i = 1, #first, 2 do
    if first[i] ~= partyId and first[i] ~= MARK then
      otherMs = math.max(0, tonumber(first[i + 1]) - nowMs())
      break
    end
  end
  return {0, G, otherMs}
end

-- How the arrival (epoch E, generation G) stands: nil while it waits, else its outcome.
local function settled(E, G)
  if E == e and redis.call('ZSCORE', partiesKey, partyId) then return nil end
  if E < e then
    local broken = redis.call('HGET', hashKey, 'x:' .. E)
    if broken then
      local reason, by = string.match(broken, '^(%a+)|(.*)$')
      return {2, G, reason, by}
    end
    if E > e - HISTORY then return {1, G} end
  end
  -- The barrier was deleted under it, or its outcome is forgotten: it cannot have tripped.
  return {2, G, 'lost', partyId}
end

local E, G
if record then
  E, G = string.match(record, '^(%d+)|(%d+)')
  E, G = tonumber(E), tonumber(G)
end
local timesOut = ARGV[8] == '1'

if op == 'arrive' then
  -- A resend of an arrival already made: the same answer, never a second arrival.
  if E then return settled(E, G) or stillWaiting(G) end
  local leaseMs, count, keepMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
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
  redis.call('HSET', hashKey, 'r:' .. partyId, e .. '|' .. g .. (timesOut and '|t' or ''))
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
end

if not E then return {3} end
local outcome = settled(E, G)
if outcome then return outcome end

if op == 'wait' then
  local endsAt = nowMs() + tonumber(ARGV[4])
  keep(hashKey)
  redis.call('ZADD', partiesKey, 'XX', endsAt, partyId)
  redis.call('ZADD', recordsKey, 'inf', MARK, endsAt + tonumber(ARGV[6]), partyId)
  keep(partiesKey)
  keep(recordsKey)
  if timesOut and string.sub(record, -2) ~= '|t' then redis.call('HSET', hashKey, 'r:' .. partyId, E .. '|' .. G .. '|t') end
  return stillWaiting(G)
end

-- 'leave': the party gives up while its generation waits; it breaks it for every party.
advance(ARGV[4], partyId)
return {2, G, ARGV[4], partyId}
