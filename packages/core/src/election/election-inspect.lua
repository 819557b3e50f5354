-- election-inspect: the election's state, changing nothing.
-- KEYS[1] term hash   KEYS[2] candidate queue   KEYS[3] candidate table   KEYS[4] fence counter
-- ARGV[1] '1' to count the waiting candidates, '0' not to
-- Returns {pttl, epoch, value, candidates, revision, fence}:
--   pttl the term's remaining ms (-2 when no term is held);
--   epoch the term's fencing token (0 when none; -1 when the key, or a counted candidate
--     queue or table, holds data these scripts did not write);
--   value the leader's value, false while nobody leads (no term, or a hand-off unconfirmed);
--   candidates the queued candidates whose entry has not expired (0 unless asked);
--   revision the term's revision (0 while nobody leads);
--   fence the slot's fencing counter: every epoch issued so far is at most this.
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]

-- @include lockhash
-- @include now
-- @include election

local pttl = redis.call('PTTL', lockKey)
local _, heldToken, _, foreign = readHash(nil)
if foreign then return {pttl, -1, false, 0, 0, 0} end
local value, revision = false, 0
if heldToken then
  local published = redis.call('HMGET', lockKey, '=', '#')
  value, revision = published[1] or false, tonumber(published[2]) or 0
end
local candidates = 0
if ARGV[1] == '1' then
  if candidatesForeign() then return {pttl, -1, false, 0, 0, 0} end
  local queued = redis.call('LRANGE', queueKey, 0, -1)
  for _, id in ipairs(queued) do
    local entry = redis.call('HGET', waitersKey, id)
    local expiresAt = entry and tonumber(string.match(entry, '^(%d+)|'))
    if expiresAt and expiresAt > nowMs() then candidates = candidates + 1 end
  end
end
-- pcall: a fence key of another type reads as 0 here (acquiring reports it).
local fence = redis.pcall('GET', fenceKey)
fence = type(fence) == 'string' and tonumber(fence) or 0
return {pttl, tonumber(heldToken) or 0, value, candidates, revision, fence}
