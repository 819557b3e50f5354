-- cancel: a waiter gives up (timeout, abort, close): it leaves the queue, and a hand-off or a
-- grant made to this very request meanwhile is undone.
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- ARGV[1] owner id    ARGV[2] request id     ARGV[3] channel        ARGV[4] hand-off claim ms
-- Returns 1 when a hold taken by this request was undone, 0 otherwise.
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, requestId, channel, claimMs = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

-- @include lockstate
-- @include publish
-- @include handoff

redis.call('LREM', queueKey, 0, requestId)
redis.call('HDEL', waitersKey, requestId)
-- Foreign data at the key has no hold of ours in it: readLock gives no count.
local holds, token, lastRequest = readLock(owner)
local count = tonumber(holds)
if not count or lastRequest ~= requestId then
  return 0
end
if count > 1 then
  redis.call('HINCRBY', lockKey, owner, -1)
  -- Undone: no request of this owner is to be recognised as applied any more.
  setLastRequest(token, lastRequest, '')
  return 1
end
redis.call('DEL', lockKey)
if not handoff() then
  publish('f')
end
return 1
