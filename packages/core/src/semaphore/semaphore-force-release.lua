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

-- Both reads before any answer: foreign data at the expiry set is reported
-- even for a semaphore never used (no count stored yet).
local stored, used, foreign, _, holders = readSemaphore('#')
if foreign then return -3 end
local expired = readExpired()
if not expired then return -3 end
if not stored then return 0 end
-- Expired holders do not count as released: only live ones are reported.
for _, holder in ipairs(expired) do
  if holders[holder] then used = used - holders[holder] end
end
-- The count stays (it lives as long as the semaphore); every holder entry
-- goes, then every lease end (see the semaphore fragment for the order).
-- ('+': the permits-in-use count older versions kept, stale once they are gone.)
local entries = {'+'}
for holder in pairs(holders) do entries[#entries + 1] = holder end
callInChunks('HDEL', semKey, entries)
redis.call('DEL', expiryKey)
local _, served, _, empty = grantWaiters(stored, 0, nil)
-- Nobody queued: whoever listens without a queue place looks again.
if served == 0 and empty then publish('f') end
if used > 0 then return 1 end
return 0
