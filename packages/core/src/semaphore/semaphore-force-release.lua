-- semaphore-force-release: take every holder's permits back, whoever holds them, then hand
-- them to the queue's head (waiters keep their places).
-- KEYS[1] semaphore hash   KEYS[2] holder expiry zset   KEYS[3] waiter queue
-- KEYS[4] waiter table     KEYS[5] fence counter
-- ARGV[1] channel   ARGV[2] hand-off claim ms
-- Returns 1 when permits were held (and are free now), 0 when none were,
--         -3 when a key holds data these scripts did not write (never modified).
local semKey, expiryKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local channel, claimMs = ARGV[1], tonumber(ARGV[2])

-- @include publish
-- @include semaphore

-- Every read before any answer: foreign data at the expiry set or the queue
-- is reported even for a semaphore never used (no count stored yet).
local stored, used, foreign, _, upgrade = readSemaphore('#')
if foreign then return -3 end
local expired, entries = readExpired()
if not expired then return -3 end
local head = readQueue(false)
if head == nil then return -3 end
if not stored then return 0 end
-- Every holder has a lease end: the whole sorted set names them (taking them
-- all back reads each one, once).
local holders = redis.call('ZRANGE', expiryKey, 0, -1)
local values = entriesOf(holders)
for i = 1, #holders do
  local value = values[i]
  if value and value ~= '-' and not entryPermits(value) then return -3 end
end
if upgrade then writeUsed(used) end
-- Expired holders do not count as released: only live ones are reported.
local live = used
for i = 1, #expired do
  local value = entries[i]
  if value and value ~= '-' then live = live - entryPermits(value) end
end
-- The count stays (it lives as long as the semaphore); every holder entry
-- goes, then every lease end (see the semaphore fragment for the order).
dropHolders(holders, values, used)
local _, served, _, empty = grantWaiters(stored, 0, nil, head)
-- Nobody queued: whoever listens without a queue place looks again.
if served == 0 and empty then publish('f') end
if live > 0 then return 1 end
return 0
