-- latch: every operation of a count-down latch, in one script (they share the reads).
-- KEYS[1] latch hash: 'n' -> count, 'r:<request id>' -> what that request did
-- KEYS[2] request records (sorted set): request id -> server time (ms) its record may go
-- ARGV[1] operation: 'down' (count down by one), 'set' (set the count while it is 0), 'read',
--         'delete' (both keys; waiters then read 0)
-- ARGV[2] request id ('' for 'read')   ARGV[3] channel
-- ARGV[4] ttl ms (the keys expire this long after a change, request records with them)
-- ARGV[5] keep ms (how long a request id is remembered, so a resend is recognised)
-- ARGV[6] 'set' only: the count
-- Returns {count, applied}: 'down': the count after it (a resend gets the count its first run
--           left) and 1, or {0, 0} at 0 (nothing counted down),
--         {count, pttl}: 'read': the count (0 for a latch never set or expired) and the hash's PTTL,
--         {1} 'set': set (a resend of a request that set it too), {0, count} still counting,
--         {1} / {0} 'delete': deleted / there was no latch,
--         {-3} a key holds data this script did not write (never modified).
-- Every read that can find foreign data comes before the first write. The count and the
-- request's record are written by one HSET: stopped anywhere, a count-down is either
-- applied and recorded, or neither.
local latchKey, requestsKey = KEYS[1], KEYS[2]
local op, requestId, channel = ARGV[1], ARGV[2], ARGV[3]
local ttlMs, keepMs = tonumber(ARGV[4]), tonumber(ARGV[5])

-- @include publish
-- @include now

local fields = redis.pcall('HMGET', latchKey, 'n', 'r:' .. requestId)
if fields.err then
  if string.find(fields.err, 'WRONGTYPE', 1, true) then return {-3} end
  return redis.error_reply(fields.err)
end
local count, record = fields[1], fields[2]
if count then
  count = tonumber(count)
  if not count or count < 0 or count ~= math.floor(count) then return {-3} end
elseif redis.call('EXISTS', latchKey) == 1 then
  return {-3} -- a hash without a count: not a latch
end
local expired = redis.pcall('ZRANGEBYSCORE', requestsKey, '-inf', nowMs(), 'LIMIT', 0, 100)
if expired.err then
  if string.find(expired.err, 'WRONGTYPE', 1, true) then return {-3} end
  return redis.error_reply(expired.err)
end

if op == 'read' then return {count or 0, redis.call('PTTL', latchKey)} end
if op == 'delete' then
  if not count then return {0} end
  redis.call('DEL', latchKey, requestsKey)
  -- Waiters read 0 now (as for a latch never set): they return.
  if count > 0 then publish('z') end
  return {1}
end

-- Records whose resends can no longer come: at most 100 a call, more than any call adds.
for _, id in ipairs(expired) do redis.call('HDEL', latchKey, 'r:' .. id) end
if #expired > 0 then redis.call('ZREM', requestsKey, unpack(expired)) end

if record then
  if op == 'set' then return {1} end
  return {tonumber(record) or 0, 1}
end

-- The new count and this request's record in one command; then when the record may go.
local function remember(value, record)
  redis.call('HSET', latchKey, 'n', value, 'r:' .. requestId, record)
  redis.call('ZADD', requestsKey, nowMs() + keepMs, requestId)
  redis.call('PEXPIRE', latchKey, ttlMs)
  redis.call('PEXPIRE', requestsKey, ttlMs)
end

if op == 'set' then
  if count and count > 0 then return {0, count} end
  remember(tonumber(ARGV[6]), 's')
  return {1}
end

-- 'down'. At 0 (or never set) it does nothing, and nothing is recorded.
if not count or count == 0 then return {0, 0} end
count = count - 1
remember(count, count)
-- Every waiter, in every process, is woken at once; each reads the count again.
if count == 0 then publish('z') end
return {count, 1}
