-- latch: every operation of a count-down latch ('down', 'set', 'read', 'delete').
-- KEYS[1] latch hash: 'n' -> count, 'r:<request id>' -> what that request did
-- KEYS[2] request records (sorted set): '#' -> +inf (the mark, _marked-set.lua),
--         request id -> server time (ms) its record may go
-- ARGV[1] operation: 'down' (count down by one), 'set' (set the count while it is 0), 'read',
--         'delete' (both keys; waiters then read 0)
-- ARGV[2] request id ('' for 'read')   ARGV[3] channel
-- ARGV[4] ttl ms (the keys expire this long after a change, request records with them)
-- ARGV[5] keep ms (how long a request id is remembered, so a resend is recognised)
-- ARGV[6] 'set' only: the count
-- Returns 'down':   {count after it, 1, pttl} (a resend gets the count its first run left),
--                   {0, 0, pttl} at 0 (nothing counted down);
--         'read':   {count, pttl} (0 for a latch never set or expired);
--         'set':    {1} set (or a resend of a request that set it), {0, count} still counting;
--         'delete': {1} deleted, {0} there was no latch;
--         {-3} a key holds data this script did not write (never modified).
--
-- Why: one script, because every operation shares the reads. Stopped at any refused command:
--   * every read that can find foreign data comes before the first write;
--   * the first writes (forgetting expired records) are harmless alone;
--   * a change runs every command it needs before the one that changes the count: PEXPIRE
--     (a no-op on a missing key) before the records' ZADD, then the wake-up, then one HSET of
--     the count with the request's record: both are written, with a TTL, or neither;
--   * 'delete' wakes the waiters before it deletes: stopped between, they read the count again.
local latchKey, requestsKey = KEYS[1], KEYS[2]
local op, requestId, channel = ARGV[1], ARGV[2], ARGV[3]
local ttlMs, keepMs = tonumber(ARGV[4]), tonumber(ARGV[5])

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

if op == 'read' then return {count or 0, redis.call('PTTL', latchKey)} end
if op == 'delete' then
  if not count then return {0} end
  -- Waiters read 0 now (as for a latch never set): they return.
  if count > 0 then publish('z') end
  redis.call('DEL', latchKey, requestsKey)
  return {1}
end

-- Records whose resends can no longer come: at most 100 a call, more than any call adds.
for _, id in ipairs(expired) do redis.call('HDEL', latchKey, 'r:' .. id) end
if #expired > 0 then redis.call('ZREM', requestsKey, unpack(expired)) end

if record then
  if op == 'set' then return {1} end
  return {tonumber(record) or 0, 1, redis.call('PTTL', latchKey)}
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

if op == 'set' then
  if count and count > 0 then return {0, count} end
  remember(tonumber(ARGV[6]), 's', false)
  return {1}
end

-- 'down'. At 0 (or never set) it does nothing, and nothing is recorded.
if not count or count == 0 then return {0, 0, redis.call('PTTL', latchKey)} end
count = count - 1
remember(count, count, count == 0)
return {count, 1, ttlMs}
