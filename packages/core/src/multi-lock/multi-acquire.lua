-- multi-acquire: take several reentrant locks of ONE hash slot at once, all or none.
-- KEYS[1]            fence counter (one INCR counter per hash slot, shared by every part)
-- KEYS[3i-1..3i+1]   part i = 1..n: lock hash, waiter queue, waiter table (acquire.lua's)
-- ARGV[1] owner id   ARGV[2] lease ms   ARGV[3] request id (= waiter id)
-- ARGV[4] mode: 'join' queues the caller on the first busy part, 'try' only tries
-- ARGV[5] waiter grace ms: how long past the holder's expiry a queue entry stays valid
-- ARGV[6] hand-off claim ms
-- ARGV[6+i] pub/sub channel of part i
-- Returns {1, token1, holdCount1, ..., tokenN, holdCountN} when the caller holds every part,
--         {0, retryAfterMs, busyPart} when it holds none ('try'),
--         {0, retryAfterMs, busyPart, serverMs} when it holds none and is queued on part
--           busyPart ('join'; serverMs: the server time of this attempt),
--         {-3, part} when a part's key holds data these scripts did not write (never modified).
--
-- Why: each part is an ordinary lock, so a plain lock on the same name excludes it and
-- release/renew/cancel work on it. A part handed to this request while it waited goes back
-- (to the next waiter) when another part is busy: a waiting request never sits on part of a
-- slot's group (multi-lock.ts, "Deadlock").
local fenceKey = KEYS[1]
local owner, leaseMs, requestId, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local graceMs, claimMs = tonumber(ARGV[5]), tonumber(ARGV[6])
local n = (#KEYS - 1) / 3
-- The fragments below read these as the current part's names (see part()).
local lockKey, queueKey, waitersKey, channel

-- @include lockstate
-- @include publish
-- @include handoff
-- @include queueentry

local function part(i)
  lockKey, queueKey, waitersKey, channel = KEYS[3 * i - 1], KEYS[3 * i], KEYS[3 * i + 1], ARGV[6 + i]
end

-- First pass: which parts are this request's already (a hand-off while it
-- waited, or a resend of a granted attempt), which are free, and the first busy one.
local ours = {}
local busyPart, retryAfterMs
-- The busy part's lock when it is take.lua's string (readLock's fifth value).
local busyTaken
for i = 1, n do
  part(i)
  local count, token, _, foreign, taken = readLock(owner)
  if foreign then return {-3, i} end
  if count then
    ours[i] = true
  elseif token then
    local pttl = redis.call('PTTL', lockKey)
    -- A key without expiry was not written by these scripts; do not spin on it.
    if pttl < 1 then pttl = graceMs end
    busyPart, retryAfterMs, busyTaken = i, pttl, taken
    break
  else
    local head = redis.call('LINDEX', queueKey, 0)
    if head and head ~= requestId then
      -- Free, but waiters queued earlier go first (as in acquire.lua).
      local holder = handoff()
      if holder == requestId then
        ours[i] = true
      elseif holder then
        busyPart, retryAfterMs = i, claimMs
        break
      end
    end
  end
end

if not busyPart then
  -- This request's queue places, if any, are used up ('try' never queues).
  -- Removed before any part is taken: a stop after them leaves nothing held.
  if mode == 'join' then
    for i = 1, n do
      part(i)
      redis.call('LREM', queueKey, 0, requestId)
      redis.call('HDEL', waitersKey, requestId)
    end
  end
  -- All or none even when the user's ACL refuses a command part-way (the
  -- writes before a refused command stay). Parts this request has already
  -- (a hand-off claim, a resend, a re-entry) change in place, which could not
  -- be undone: every command they need is first sent as a write that changes
  -- nothing, so a refusal comes before any part is touched. New parts are
  -- written next; if one of their commands is refused, those created go again
  -- before the server's error is raised. The parts this request had are
  -- written last, by commands already known to be allowed.
  local plan = {}
  for i = 1, n do
    if ours[i] then
      part(i)
      local holds, heldToken, lastRequest = readLock(owner)
      local pttl = redis.call('PTTL', lockKey)
      plan[i] = { holds = holds, token = heldToken, lastRequest = lastRequest, pttl = pttl }
      if lastRequest == requestId then
        redis.call('HDEL', lockKey, '')
      else
        redis.call('HINCRBY', lockKey, owner, 0)
        redis.call('HSET', lockKey, '@' .. lastRequest, heldToken)
        redis.call('HDEL', lockKey, '')
      end
      if pttl > 0 and pttl < leaseMs then redis.call('PEXPIRE', lockKey, pttl) end
    end
  end
  local reply = {1}
  local created = {}
  local ok, failure = pcall(function()
    for i = 1, n do
      if not ours[i] then
        part(i)
        local token = redis.call('INCR', fenceKey)
        redis.call('HSET', lockKey, owner, 1, '@' .. requestId, token)
        created[#created + 1] = lockKey
        redis.call('PEXPIRE', lockKey, leaseMs)
        reply[2 * i] = tonumber(token)
        reply[2 * i + 1] = 1
      end
    end
  end)
  if not ok then
    for _, key in ipairs(created) do redis.call('DEL', key) end
    return error(failure)
  end
  for i = 1, n do
    local was = plan[i]
    if was then
      part(i)
      local count
      if was.lastRequest == requestId then
        -- A hand-off claim to this request, or a resend: never counted twice.
        redis.call('HDEL', lockKey, '@c')
        count = was.holds
      else
        count = redis.call('HINCRBY', lockKey, owner, 1)
        setLastRequest(was.token, was.lastRequest, requestId)
      end
      if was.pttl < leaseMs then redis.call('PEXPIRE', lockKey, leaseMs) end
      reply[2 * i] = tonumber(was.token)
      reply[2 * i + 1] = tonumber(count)
    end
  end
  return reply
end

-- Busy: hold nothing of the group while waiting, and stay queued on the busy part only.
for i = 1, n do
  if i ~= busyPart then
    part(i)
    redis.call('LREM', queueKey, 0, requestId)
    redis.call('HDEL', waitersKey, requestId)
    local holds, _, lastRequest = readLock(owner)
    if holds and lastRequest == requestId then
      redis.call('DEL', lockKey)
      if not handoff() then publish('f') end
    end
  end
end

if mode == 'join' then
  part(busyPart)
  -- A waiter that queues needs the holder's release to see it: take.lua's
  -- string lock, which release-all.lua frees without a hand-off, becomes
  -- the hash first (as in acquire.lua).
  if busyTaken then hashLock(busyTaken) end
  joinQueue(retryAfterMs + graceMs, leaseMs .. '|' .. requestId .. '|' .. owner)
  return {0, retryAfterMs, busyPart, nowMs()}
end
return {0, retryAfterMs, busyPart}
