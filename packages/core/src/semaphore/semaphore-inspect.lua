-- semaphore-inspect: the exact permits in use, after purging expired holders (and handing what
-- they freed to the queue's head), and optionally a new count.
-- KEYS[1] semaphore hash   KEYS[2] holder expiry zset   KEYS[3] waiter queue
-- KEYS[4] waiter table     KEYS[5] fence counter
-- ARGV[1] channel   ARGV[2] hand-off claim ms
-- ARGV[3] new permit count to store, or '' to leave it as it is
-- Returns {storedCount, used, previousCount}: storedCount -1 for a semaphore never used
--           (nothing is written then, unless a count is set); previousCount the count
--           stored before this call (-1: none),
--         {-3} when a key holds data these scripts did not write (never modified).
local semKey, expiryKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local channel, claimMs, newCount = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])

-- @include publish
-- @include semaphore

local stored, used, foreign, _, upgrade = readSemaphore('#')
if foreign then return {-3} end
local expired, entries = readExpired()
if not expired then return {-3} end
local head = readQueue(false)
if head == nil then return {-3} end
if not stored and not newCount then return {-1, 0, -1} end
local previous = stored or -1
if upgrade then writeUsed(used) end
local before = used
used = purge(expired, entries, used)
if newCount then
  if not stored then
    redis.call('HSET', semKey, '#', newCount, '=', 0)
  else
    redis.call('HSET', semKey, '#', newCount)
  end
  stored = newCount
end
if used < before or newCount then used = grantWaiters(stored, used, nil, head) end
return {stored, used, previous}
