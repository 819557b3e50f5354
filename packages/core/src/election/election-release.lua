-- election-release: end a term (resign) and hand it to the first live candidate; with a
-- request id, undo a campaign that gives up (its queue place, and a term granted to it).
-- KEYS[1] term hash   KEYS[2] candidate queue   KEYS[3] candidate table   KEYS[4] fence counter
-- ARGV[1] owner id    ARGV[2] candidates' channel   ARGV[3] hand-off claim ms
-- ARGV[4] observers' channel   ARGV[5] request id of a campaign to undo, or ''
-- Returns {1, 0} when the owner's term ended here,
--         {-1} when no term is held (it ran out, or was removed),
--         {-2} when another owner holds the term,
--         {-3} when the term key holds data these scripts did not write (never modified).
--
-- Why: a candidate queue or table of another type is left as it is: nobody can be queued
-- there, so the term ends without a hand-off rather than not at all.
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, channel, claimMs, news, requestId = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]

-- @include lockhash
-- @include publish
-- @include handoff
-- @include election

-- Read before the first write, as readHash below.
local candidates = not candidatesForeign()
if requestId ~= '' and candidates then
  -- Out of the queue first: nothing below may hand the term to this request.
  redis.call('LREM', queueKey, 0, requestId)
  redis.call('HDEL', waitersKey, requestId)
end
local count, heldToken, _, foreign = readHash(owner)
if foreign then return {-3} end
if not count then
  if heldToken then return {-2} end
  return {-1}
end
-- A confirmed term's end is news for the observers (an unconfirmed claim never led).
local published = redis.call('HMGET', lockKey, '=', '#')
redis.call('DEL', lockKey)
if not (candidates and handoff()) then publish('f') end
if published[1] then announce(heldToken, (tonumber(published[2]) or 0) + 1) end
return {1, 0}
