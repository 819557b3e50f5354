-- semaphore-force-release: take every holder's permits back, whoever holds them,
-- then hand them to the queue's head (waiters keep their places).
-- KEYS[1] semaphore hash   KEYS[2] holder expiry zset   KEYS[3] waiter queue
-- KEYS[4] waiter table     KEYS[5] fence counter
-- ARGV[1] channel   ARGV[2] hand-off claim ms
-- Returns 1 when permits were held (and are free now), 0 when none were,
--         -3 when a key holds data these scripts did not write (never modified).
local semKey, expiryKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local channel, claimMs = ARGV[1], tonumber(ARGV[2])

-- @include publish
-- @include semaphore

local stored, used, foreign = readSemaphore('#')
if foreign then return -3 end
if not stored then return 0 end
-- Expired holders go first, so that only live ones count as released.
local freed = purge()
if not freed then return -3 end
used = used - freed
-- The count stays (it lives as long as the semaphore); every holder entry goes.
redis.call('DEL', semKey, expiryKey)
redis.call('HSET', semKey, '#', stored, '+', 0)
local _, served, _, empty = grantWaiters(stored, 0, nil)
-- Nobody queued: whoever listens without a queue place looks again.
if served == 0 and empty then publish('f') end
if used > 0 then return 1 end
return 0
