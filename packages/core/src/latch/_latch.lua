-- Fragment `latch` (the latch's own): the reads every latch operation starts with, and its write.
-- Expects: latchKey, requestsKey (KEYS[1], KEYS[2]), requestId ('' for none); for remember(),
--   channel, ttlMs and keepMs.
-- Defines: count (nil: no latch), record (what request requestId did, nil: nothing known),
--   expired (request ids whose records may go, at most 100), forgetExpired(),
--   remember(value, record, wake); the script returns {-3} here when a key holds data holdfast
--   did not write (never modified).
-- The latch hash: 'n' -> count, 'r:<request id>' -> what that request did ('s' set it, else
--   the count it left); the request records (sorted set): '#' -> +inf (the mark,
--   _marked-set.lua), request id -> server time (ms) its record may go.
--
-- Why: stopped at any refused command, the latch stays consistent:
--   * every read that can find foreign data comes before the first write;
--   * the first writes (forgetting expired records) are harmless alone;
--   * a change runs every command it needs before the one that changes the count: PEXPIRE
--     (a no-op on a missing key) before the records' ZADD, then the wake-up, then one HSET of
--     the count with the request's record: both are written, with a TTL, or neither.
-- @include publish
-- @include now
-- @include markedset

local fields = redis.pcall('HMGET', latchKey, 'n', 'r:' .. requestId)
if isForeign(fields) then return {-3} end
local count, record = fields[1], fields[2]
if count then
  count = tonumber(count)
  if not count or count < 0 or count ~= math.floor(count) then return {-3} end
elseif redis.call('EXISTS', latchKey) == 1 then
  return {-3} -- a hash without a count: not a latch
end
if foreignSet(requestsKey) then return {-3} end
local expired = redis.call('ZRANGEBYSCORE', requestsKey, '-inf', nowMs(), 'LIMIT', 0, 100)

-- Records whose resends can no longer come: at most 100 a call, more than any call adds.
local function forgetExpired()
  for _, id in ipairs(expired) do redis.call('HDEL', latchKey, 'r:' .. id) end
  if #expired > 0 then redis.call('ZREM', requestsKey, unpack(expired)) end
end

-- The new count and this request's record in one command, the commands it needs run before.
-- `wake`: the count reaches 0, every waiter, in every process, is woken at once (each reads
-- the count again, after this script).
local function remember(value, record, wake)
  redis.call('PEXPIRE', requestsKey, ttlMs)
  redis.call('ZADD', requestsKey, 'inf', MARK, nowMs() + keepMs, requestId)
  redis.call('PEXPIRE', requestsKey, ttlMs)
  if wake then publish('z') end
  redis.call('HSET', latchKey, 'n', value, 'r:' .. requestId, record)
  redis.call('PEXPIRE', latchKey, ttlMs)
end
