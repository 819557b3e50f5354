-- release: drop one hold; the last one frees the lock or hands it to the next waiter.
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- ARGV[1] owner id    ARGV[2] request id     ARGV[3] channel        ARGV[4] hand-off claim ms
-- ARGV[5] '0' to drop one hold; '1' or absent to drop every hold of this owner at once
-- Returns 0 when the lock left this owner,
--         {1, remainingHolds} when the owner still holds it (or a resend of such a release),
--         {-1} when the lock is gone, {-2} when another owner holds it,
--         {-3} when the key holds data these scripts did not write (never modified).
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, requestId, channel = ARGV[1], ARGV[2], ARGV[3]
local all = ARGV[5] ~= '0'

-- @include publish

-- The common case first: the owner's only hold (or every hold, with `all`) of
-- a lock nobody queues for. It returns before the functions below are built
-- (see acquire.lua). The hash then has two fields: the owner's and the
-- token's, named after the last request applied (ours: a resend, below).
local fields = redis.pcall('HGETALL', lockKey)
local freed = false
if not fields.err and #fields == 4 then
  local mine = (fields[1] == owner and 1) or (fields[3] == owner and 3)
  if mine and (all or fields[mine + 1] == '1') and fields[4 - mine] ~= '@' .. requestId then
    redis.call('DEL', lockKey)
    if redis.call('EXISTS', queueKey) == 0 then
      publish('f')
      return 0
    end
    freed = true
  end
end

-- Only a hand-off needs it: converted past the fast path.
local claimMs = tonumber(ARGV[4])

-- @include lockstate
-- @include handoff

if not freed then
  local holds, token, lastRequest, foreign = readLock(owner, fields)
  if foreign then return {-3} end
  local count = tonumber(holds)
  if not count then
    if token then return {-2} end
    return {-1}
  end
  if lastRequest == requestId then
    -- A resend of a release that was applied: report the same outcome.
    return {1, count}
  end
  if count > 1 and not all then
    redis.call('HINCRBY', lockKey, owner, -1)
    setLastRequest(token, lastRequest, requestId)
    return {1, count - 1}
  end
  redis.call('DEL', lockKey)
end
if not handoff() then
  publish('f')
end
return 0
