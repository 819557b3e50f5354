-- semaphore-acquire: take permits, queue for them, or confirm a hand-off.
-- KEYS[1] semaphore hash   KEYS[2] holder expiry zset   KEYS[3] waiter queue
-- KEYS[4] waiter table     KEYS[5] fence counter (one per hash slot)   (_semaphore.lua)
-- ARGV[1] owner id (one per acquisition)   ARGV[2] lease ms   ARGV[3] request id (= waiter id)
-- ARGV[4] mode: 'try' only tries, 'join' queues the caller when it must wait,
--         'confirm' only extends a holder this owner already is (a hand-off's confirmation)
-- ARGV[5] permits wanted   ARGV[6] the caller's permit count
-- ARGV[7] waiter grace ms  ARGV[8] channel   ARGV[9] hand-off claim ms
-- Returns {1, token, 1, leaseMs} when the owner holds its permits (a resend gets the same
--           answer, never a second grant),
--         {0, retryAfterMs} when it must wait ('try'),
--         {0, retryAfterMs, serverMs} when it must wait and is queued ('join'),
--         {-1} in 'confirm' mode when the owner holds nothing (any more),
--         {-3} when a key holds data these scripts did not write (never modified),
--         {-4, storedCount} when the stored permit count differs from the caller's.
local semKey, expiryKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, leaseMs, requestId, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local wanted, count, graceMs = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local channel, claimMs = ARGV[8], tonumber(ARGV[9])

-- @include publish
-- @include semaphore
-- @include queueentry

-- Every read that can find foreign data before the first write.
local stored, used, foreign, mine, upgrade = readSemaphore(owner)
if foreign then return {-3} end
local expired, entries = readExpired()
if not expired then return {-3} end
local head = readQueue(mode == 'join')
if head == nil then return {-3} end
if not stored then
  if mode == 'confirm' then return {-1} end
  stored, used = count, 0
  redis.call('HSET', semKey, '#', stored, '=', 0)
elseif stored ~= count and mode ~= 'confirm' then
  return {-4, stored}
elseif upgrade then
  writeUsed(used)
end
local ownerPurged
used, ownerPurged = purge(expired, entries, used, owner)

if mine and not ownerPurged then
  -- A resend after a lost reply, or the confirmation of a hand-off: the same
  -- holder, never counted twice; its lease runs at least leaseMs from now.
  local token = tonumber(string.match(mine, '|(%d+)$'))
  local endsAt = nowMs() + leaseMs
  local score = redis.call('ZSCORE', expiryKey, owner)
  if not score or tonumber(score) < endsAt then
    redis.call('ZADD', expiryKey, endsAt, owner)
  end
  return {1, token, 1, leaseMs}
end
if mode == 'confirm' then return {-1} end

-- Waiters queued earlier go first (permits freed by an expiry are handed here).
local served, selfToken, empty
used, served, selfToken, empty = grantWaiters(stored, used, requestId, head)
if selfToken then return {1, selfToken, 1, leaseMs} end
if empty and used + wanted <= stored then
  return {1, grant(owner, wanted, leaseMs, used), 1, leaseMs}
end

-- Must wait: re-check no later than the first holder's lease end (a release
-- or a purge that frees enough permits hands them over by message first).
local first = redis.call('ZRANGE', expiryKey, 0, 0, 'WITHSCORES')
local retryAfterMs = claimMs
if first[2] then retryAfterMs = math.max(1, tonumber(first[2]) - nowMs()) end
if mode == 'join' then
  joinQueue(retryAfterMs + graceMs, leaseMs .. '|' .. wanted .. '|' .. owner)
  return {0, retryAfterMs, nowMs()}
end
return {0, retryAfterMs}
