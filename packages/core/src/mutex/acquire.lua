-- acquire: take, re-enter, or queue for a reentrant lock.
-- KEYS[1] lock hash: owner -> hold count, '@' .. last applied request id -> fencing token,
--         '@c' -> 1 while a hand-off is unconfirmed (_lock-state.lua); or take.lua's string
-- KEYS[2] waiter queue (list of waiter ids, FIFO)
-- KEYS[3] waiter table (hash: waiter id -> expiresAt|leaseMs|requestId|owner)
-- KEYS[4] fence counter (one INCR counter per hash slot, shared by every lock in it)
-- ARGV[1] owner id   ARGV[2] lease ms   ARGV[3] request id (= waiter id)
-- ARGV[4] mode: 'join' queues the caller when busy, 'try' only tries, 'reenter' only adds a
--         hold for an owner that already holds the lock
-- ARGV[5] hand-off ms: how long a handed-off waiter has to confirm its claim, and how long
--         past the holder's expiry a queue entry stays valid
-- ARGV[6] channel
-- Returns token (an integer, > 0) when the caller took a free lock: one hold, the whole lease,
--         {1, token, holdCount, pttl} when the caller holds the lock otherwise,
--         {0, retryAfterMs} when it does not ('try'),
--         {0, retryAfterMs, serverMs, place} when it does not and is queued ('join'; serverMs:
--           the server time of this attempt; place: the caller's place in the queue, 0 at the
--           head, 8 for any place from there on),
--         {-1} / {-2} in 'reenter' mode when the lock is gone / held by another owner,
--         {-3} when the lock key holds data these scripts did not write (never modified).
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, requestId = ARGV[1], ARGV[3]
local mode = ARGV[4]

-- A first attempt at a free lock nobody queues for (the common case) goes
-- straight to the grant at the end; the block below is every other case. A
-- queued attempt ('join') almost always finds the lock held, and a re-entry or
-- a hand-off confirmation always does: they skip the EXISTS.
if mode ~= 'try' or redis.call('EXISTS', lockKey, queueKey) ~= 0 then
  local leaseMs, join, claimMs, channel = tonumber(ARGV[2]), mode == 'join', tonumber(ARGV[5]), ARGV[6]
  local graceMs = claimMs

-- @include lockstate
-- @include publish
-- @include handoff
-- @include queueentry

  -- Returns the lease left afterwards.
  local function extendAtLeast(ms)
    local pttl = redis.call('PTTL', lockKey)
    if pttl < ms then
      redis.call('PEXPIRE', lockKey, ms)
      return ms
    end
    return pttl
  end

  local function granted(token, count, pttl)
    return {1, tonumber(token), tonumber(count), pttl}
  end

  -- How near the head the caller is: a waiter that polls (no pub/sub) looks again soon only when
  -- the lock is about to be handed to it. LINDEX near the head, not LPOS: no command beyond the
  -- README's ACL.
  local PLACES_SEEN = 8
  local function place()
    for i = 0, PLACES_SEEN - 1 do
      local id = redis.call('LINDEX', queueKey, i)
      if id == requestId or not id then return i end
    end
    return PLACES_SEEN
  end

  local function enqueue(retryAfterMs)
    if join then
      joinQueue(retryAfterMs + graceMs, leaseMs .. '|' .. requestId .. '|' .. owner)
      -- The waiter dates a later hand-off message against this time.
      return {0, retryAfterMs, nowMs(), place()}
    end
    return {0, retryAfterMs}
  end

  -- One read for the common cases: our hold count, the token (set in every held
  -- lock, so it also tells whether anyone holds it), and the last request applied.
  local count, heldToken, lastRequest, foreign, taken = readLock(owner)
  if foreign then return {-3} end
  if count then
    if lastRequest == requestId then
      -- The same request again: a resend after a lost reply, or the waiter
      -- confirming a hand-off (never a string lock). Never count it twice.
      if not taken and redis.call('HDEL', lockKey, '@c') == 1 then
        -- Confirmation of a hand-off: from the short claim to the full lease.
        redis.call('PEXPIRE', lockKey, leaseMs)
        return granted(heldToken, count, leaseMs)
      end
      return granted(heldToken, count, extendAtLeast(leaseMs))
    end
    -- A second hold needs the hash (its count); a string without a TTL is not ours.
    if taken and not hashLock(taken) then return {-3} end
    count = redis.call('HINCRBY', lockKey, owner, 1)
    setLastRequest(heldToken, lastRequest, requestId)
    return granted(heldToken, count, extendAtLeast(leaseMs))
  end

  if mode == 'reenter' then
    if heldToken then return {-2} end
    return {-1}
  end

  if heldToken then
    local pttl = redis.call('PTTL', lockKey)
    -- A key without expiry was not written by these scripts; do not spin on it.
    if pttl < 1 then return enqueue(graceMs) end
    -- Whoever waits here ('join' queues; 'try' is almost always a Redlock
    -- waiter, which sleeps until a release is published) needs the holder's
    -- release to see it: a string lock, which release-all.lua frees without
    -- a hand-off or a publish, becomes the hash first.
    if taken then hashLock(taken) end
    return enqueue(pttl)
  end

  local holder = handOnFree()
  if holder == requestId then
    -- Every entry ahead of ours had expired: the claim is ours, confirm it now.
    redis.call('HDEL', lockKey, '@c')
    redis.call('PEXPIRE', lockKey, leaseMs)
    return granted(redis.call('HGET', lockKey, '@' .. requestId), 1, leaseMs)
  end
  if holder then return enqueue(claimMs) end
  -- Free, and nobody queued ahead of the caller: the grant below.
end

-- The key is new: a PEXPIRE the ACL refuses (the HSET before it stays) would
-- leave a lock that never expires, so the key goes again before the error.
-- The lease goes on as the string it came as.
local token = redis.call('INCR', fenceKey)
redis.call('HSET', lockKey, owner, '1', '@' .. requestId, token)
local expired = redis.pcall('PEXPIRE', lockKey, ARGV[2])
if type(expired) == 'table' then
  redis.call('DEL', lockKey)
  return expired
end
return token
