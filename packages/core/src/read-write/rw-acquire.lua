-- rw-acquire: take, re-enter, or queue for one side of a read-write lock.
-- KEYS[1] lock hash      one field per holder (see _rw-state.lua)
-- KEYS[2] waiter queue   list of waiter ids, FIFO, readers and writers
-- KEYS[3] waiter table   hash waiter id -> expiresAt|leaseMs|requestId|kind|owner
-- KEYS[4] fence counter  one INCR counter per hash slot, shared with every lock in it
-- ARGV[1] owner id       ARGV[2] lease ms            ARGV[3] request id (= waiter id)
-- ARGV[4] mode: 'join' queues the caller when busy, 'try' only tries, 'reenter' only
--         adds a hold for an owner that already holds
-- ARGV[5] hand-off ms: how long a handed-off waiter has to confirm its claim, and how
--         long past the retry time a queue entry stays valid (one setting, sent once)
-- ARGV[6] channel
-- ARGV[7] 'r' to read, 'w' to write
-- ARGV[8] (optional) the owner id of the caller's enclosing write hold: a read
--         asked for by the writer itself is granted at once (downgrade)
-- Returns {1, token, holdCount, pttl} when the caller holds (pttl: its own lease left),
--         {0, retryAfterMs} when it does not ('try'),
--         {0, retryAfterMs, serverMs} when it does not and is queued ('join'),
--         {-1} / {-2} in 'reenter' mode when the hold is gone / another owner holds,
--         {-3} when the lock key holds data these scripts did not write (never modified).
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, leaseMs, requestId, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local claimMs, channel = tonumber(ARGV[5]), ARGV[6]
local graceMs = claimMs
local kind, via = ARGV[7], ARGV[8] or ''

-- @include publish
-- @include rwstate
-- @include queueentry

local function granted(holders, h)
  saveHolder(owner, h)
  settle(holders)
  return {1, h.token, h.count, h.expiresAt - nowMs()}
end

local function newHold(holders, token)
  local h = {kind = kind, count = 1, expiresAt = nowMs() + leaseMs, token = token, requestId = requestId, claim = false}
  holders[owner] = h
  return granted(holders, h)
end

local holders, writer, n = loadHolders(true)
if not holders then return {-3} end

local mine = holders[owner]
if mine then
  if mine.requestId == requestId then
    -- The same request again: a resend after a lost reply, or the waiter
    -- confirming a hand-off (claim to full lease). Never count it twice.
    if mine.claim then
      mine.claim = false
      mine.expiresAt = nowMs() + leaseMs
    end
  else
    mine.count = mine.count + 1
    mine.requestId = requestId
  end
  mine.expiresAt = math.max(mine.expiresAt, nowMs() + leaseMs)
  return granted(holders, mine)
end

if mode == 'reenter' then
  if n > 0 then return {-2} end
  return {-1}
end

-- Downgrade: the writer reads inside its own write hold, ahead of every waiter.
if kind == 'r' and via ~= '' and writer == via then
  return newHold(holders, readToken())
end

-- Waiters queued earlier go first; our own queue entry may be among those granted.
local _
_, writer, n = promote(holders, writer, n, requestId)
mine = holders[owner]
if mine and mine.requestId == requestId then
  mine.claim = false
  mine.expiresAt = nowMs() + leaseMs
  return granted(holders, mine)
end
settle(holders)

local queued = redis.call('LINDEX', queueKey, 0) ~= false
if not queued and kind == 'r' and not writer then return newHold(holders, readToken()) end
if not queued and kind == 'w' and n == 0 then return newHold(holders, redis.call('INCR', fenceKey)) end

-- Busy: look again when the first lease runs out, if no message comes before.
local retryAfterMs
for _, h in pairs(holders) do
  local left = h.expiresAt - nowMs()
  if not retryAfterMs or left < retryAfterMs then retryAfterMs = left end
end
retryAfterMs = math.max(retryAfterMs or graceMs, 1)

if mode == 'join' then
  joinQueue(retryAfterMs + graceMs, leaseMs .. '|' .. requestId .. '|' .. kind .. '|' .. owner)
  return {0, retryAfterMs, nowMs()}
end
return {0, retryAfterMs}
