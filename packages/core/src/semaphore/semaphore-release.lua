-- semaphore-release: give an owner's permits back and hand them to the queue's head.
-- KEYS[1] semaphore hash   KEYS[2] holder expiry zset   KEYS[3] waiter queue
-- KEYS[4] waiter table     KEYS[5] fence counter
-- ARGV[1] owner id   ARGV[2] channel   ARGV[3] hand-off claim ms
-- ARGV[4] a request id whose queue entry goes too (a cancelled wait), or ''
-- Returns {1, 0} when the owner's permits were given back,
--         {-1} when the owner holds none (its lease ran out, or the semaphore was removed),
--         {-3} when a key holds data these scripts did not write (never modified).
local semKey, expiryKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, channel, claimMs, requestId = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]

-- @include publish
-- @include semaphore

local stored, used, foreign, mine, upgrade = readSemaphore(owner)
if foreign then return {-3} end
if not stored then return {-1} end
local expired, entries = readExpired()
if not expired then return {-3} end
local head = readQueue(requestId ~= '')
if head == nil then return {-3} end
if upgrade then writeUsed(used) end
local freed, ownerPurged = used, false
used, ownerPurged = purge(expired, entries, used, owner)
freed = freed - used
if ownerPurged then mine = nil end
-- A cancelled wait leaves the queue first, so nothing below hands it permits
-- (its entry before its place: a place without an entry is dropped as gone).
local dequeued = false
if requestId ~= '' and redis.call('HDEL', waitersKey, requestId) == 1 then
  redis.call('LREM', queueKey, 1, requestId)
  -- It may have been the head that held the others back.
  dequeued = true
  head = nil
end
local served, selfToken, empty = 0, nil, false
if mine then
  -- Given back in the HSET that lowers the sum, then deleted, then its lease
  -- end (see the semaphore fragment for the order).
  used = dropHolders({owner}, {mine}, used)
end
if mine or freed > 0 or dequeued then
  used, served, selfToken, empty = grantWaiters(stored, used, nil, head)
  -- Nobody queued: whoever listens without a queue place looks again.
  if served == 0 and empty then publish('f') end
end
if not mine then return {-1} end
return {1, 0}
