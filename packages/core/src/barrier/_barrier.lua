-- Fragment `barrier` (the barrier's own): the reads every barrier operation starts with, and
-- how a generation ends.
-- Expects: partyId ('' for none), channel.
-- Defines: hashKey, partiesKey, recordsKey (KEYS[1..3]); p, e, g (count, epoch, generation;
--   nil for a barrier never used); begin(ttlMs, leaseMs), keep(key), advance(reason, by),
--   atLeast(n), stillWaiting(G), settled(E, G), arrival(); the script returns {-3} here when a
--   key holds data holdfast did not write (never modified).
-- The barrier hash: 'p' -> party count, 'e' -> epoch (+1 per trip or break), 'g' -> generation
--   (+1 per trip), 'x:<epoch>' -> '<reason>|<party id>' of a broken epoch (the last 100),
--   'r:<party id>' -> '<epoch>|<generation>' of its arrival, '<epoch>|<generation>|t' once its
--   lease ends when its wait does. Waiting parties (sorted set): '#' -> +inf (the mark,
--   _marked-set.lua), party id -> server time (ms) its lease ends. Arrival records (sorted
--   set): '#' -> +inf, party id -> server time its 'r:' field may go.
--
-- Why: a party counts only while its lease is live: every operation first purges the ended
-- leases (begin: breaking their generation), so a trip counts live parties only; a lease ended
-- at its party's wait is 'timeout', else 'lost'. Waiting parties are counted with ZRANGE by
-- rank (the documented ACL has no ZCARD). Stopped at any refused command, the barrier stays
-- consistent: reads that can find foreign data come before the first write; the first write
-- (forgetting old arrivals) is harmless alone; a key gets its TTL as it is written; an arrival
-- is recorded before it is counted; a generation ends by dropping its parties first, so none
-- is counted again.
local hashKey, partiesKey, recordsKey = KEYS[1], KEYS[2], KEYS[3]
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

local keepFor = 1
local function keep(key)
  redis.call('PEXPIRE', key, keepFor)
end

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

-- Starts an operation. `ttlMs` (nil for one that sets no TTL) sets how long keep() keeps a key:
-- the caller's ttl, never less than `leaseMs` (a lease and how long its arrival is remembered
-- past it) nor than the last arrival record (which outlives its lease) is kept. Then forgets
-- the arrivals whose resends and late looks can no longer come (at most 100 a call), and
-- breaks the generation of a party whose lease ended, for every party in it.
local function begin(ttlMs, leaseMs)
  if ttlMs then
    -- The last record: the member before the mark.
    local last = redis.call('ZRANGE', recordsKey, -2, -2, 'WITHSCORES')
    keepFor = math.max(1, ttlMs, last[2] and tonumber(last[2]) - nowMs() or 0, leaseMs or 0)
  end
  for _, id in ipairs(forgotten) do
    redis.call('HDEL', hashKey, 'r:' .. id)
    if id == partyId then record = nil end
  end
  if #forgotten > 0 then redis.call('ZREM', recordsKey, unpack(forgotten)) end
  if p and #expired > 0 then advance(expiredWhy, expired[1]) end
end

-- True when at least n parties wait (O(log N); the mark is last).
local function atLeast(n)
  local nth = redis.call('ZRANGE', partiesKey, n - 1, n - 1)[1]
  return nth ~= nil and nth ~= MARK
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

-- The party's arrival, once begin() ran: its epoch and generation, nil when none is known.
local function arrival()
  if not record then return nil end
  local E, G = string.match(record, '^(%d+)|(%d+)')
  return tonumber(E), tonumber(G)
end
