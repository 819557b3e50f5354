-- rw-acquire: take, re-enter, or queue for one side of a read-write lock.
-- KEYS[1] lock hash (one field per holder, _rw-state.lua)
-- KEYS[2] waiter queue (list of waiter ids, FIFO, readers and writers)
-- KEYS[3] waiter table (hash: waiter id -> expiresAt|leaseMs|requestId|kind|owner)
-- KEYS[4] fence counter (one INCR counter per hash slot, shared with every lock in it)
-- KEYS[5] lease ends (sorted set: owner -> lease end, _rw-state.lua)
-- ARGV[1] owner id   ARGV[2] lease ms   ARGV[3] request id (= waiter id)
-- ARGV[4] mode: 'join' queues the caller when busy, 'try' only tries, 'reenter' only adds a
--         hold for an owner that already holds
-- ARGV[5] hand-off ms: how long a handed-off waiter has to confirm its claim, and how long
--         past the retry time a queue entry stays valid
-- ARGV[6] channel
-- ARGV[7] 'r' to read, 'w' to write
-- ARGV[8] (optional) the owner id of the caller's enclosing write hold: a read asked for by
--         the writer itself is granted at once (downgrade)
-- Returns {1, token, holdCount, pttl} when the caller holds (pttl: its own lease left),
--         {0, retryAfterMs} when it does not ('try'),
--         {0, retryAfterMs, serverMs} when it does not and is queued ('join'),
--         {-1} / {-2} in 'reenter' mode when the hold is gone / another owner holds,
--         {-3} when the lock key, its lease ends, the queue or (joining, or a waiter queued)
--           the waiter table holds data these scripts did not write (never modified).
local lockKey, queueKey, waitersKey, fenceKey, expiryKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, leaseMs, requestId, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local claimMs, channel = tonumber(ARGV[5]), ARGV[6]
local graceMs = claimMs
local kind, via = ARGV[7], ARGV[8] or ''

-- @include publish
-- @include rwstate
-- @include queueentry

local function granted(h, endsAt)
  saveHolder(owner, h, endsAt)
  settle()
  return {1, h.token, h.count, endsAt - nowMs()}
end

local function newHold(token)
  return granted({kind = kind, count = 1, token = token, requestId = requestId, claim = false}, nowMs() + leaseMs)
end

-- Every read that can find foreign data before the first write.
local head = readQueue(mode == 'join')
if head == nil then return {-3} end
local state = readState(owner)
if not state then return {-3} end
state.head = head
purge(state, owner)

local mine = state.mine
if mine then
  local endsAt = nowMs() + leaseMs
  if mine.requestId == requestId then
    -- The same request again: a resend after a lost reply, or the waiter
    -- confirming a hand-off (claim to full lease). Never count it twice.
    if not mine.claim then
      local score = tonumber(redis.call('ZSCORE', expiryKey, owner))
      if score and score > endsAt then endsAt = score end
    end
    mine.claim = false
  else
    mine.count = mine.count + 1
    mine.requestId = requestId
    local score = tonumber(redis.call('ZSCORE', expiryKey, owner))
    if score and score > endsAt then endsAt = score end
  end
  return granted(mine, endsAt)
end

if mode == 'reenter' then
  if anyHolder() then return {-2} end
  return {-1}
end

-- Downgrade: the writer reads inside its own write hold, ahead of every waiter.
if kind == 'r' and via ~= '' and state.writer == via then
  return newHold(readToken())
end

-- Waiters queued earlier go first; our own queue entry may be among those granted.
local busy = anyHolder()
local grantedAny
grantedAny, busy = promote(state, busy, requestId, owner, leaseMs)
if state.mine then
  settle()
  return {1, state.mine.token, 1, leaseMs}
end
if grantedAny then settle() end

local queued = redis.call('LINDEX', queueKey, 0) ~= false
if not queued and kind == 'r' and not state.writer then return newHold(readToken()) end
if not queued and kind == 'w' and not busy then return newHold(redis.call('INCR', fenceKey)) end

-- Busy: look again when the first lease runs out, if no message comes before.
local retryAfterMs = math.max(firstLeaseLeft() or graceMs, 1)

if mode == 'join' then
  joinQueue(retryAfterMs + graceMs, leaseMs .. '|' .. requestId .. '|' .. kind .. '|' .. owner)
  return {0, retryAfterMs, nowMs()}
end
return {0, retryAfterMs}
