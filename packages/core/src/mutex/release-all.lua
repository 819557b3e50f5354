-- release-all: the last release of a hold: every hold of the owner at once.
-- KEYS[1] lock   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- ARGV[1] owner id
-- ARGV[2] hand-off claim ms .. '|' .. channel
-- ARGV[3] (optional) the string lock take.lua wrote for this hold (its grant's release hint)
-- Returns 0 when the lock left this owner,
--         {-1} when the lock is gone, {-2} when another owner holds it,
--         {-3} when the key holds data these scripts did not write (never modified).
--
-- Why: no request id: nothing here records one, and a resend after a lost reply finds the
-- lock gone or handed on, which the client reads as its own release (lease-ops.ts).
-- release.lua drops one hold of many. One call whichever layout the lock has by now, so a
-- release walks to the server once (a waiter may have turned take.lua's string into the hash).
local lockKey, queueKey = KEYS[1], KEYS[2]

-- A hold take.lua granted, while the lock is still the string it wrote: nobody
-- is queued (a waiter turns the string into the hash before it queues), so one
-- GET compared with the string decides. Anything else (the hash, another
-- owner's lock, none) is decided below, in the same call.
if ARGV[3] and redis.pcall('GET', lockKey) == ARGV[3] then
  redis.call('DEL', lockKey)
  return 0
end

-- The common case first, in one read: the owner's field (its hold count) is
-- there only while this owner holds the lock, an owner id being new for every
-- acquisition. Nobody queued: nobody to wake either (a Lock's waiter that
-- listens but has not queued yet tries again, queued, before it sleeps:
-- acquire-loop.ts; Redlock's waiters, which never queue, are woken by
-- release.lua, which Redlock releases with).
local held = redis.pcall('HGET', lockKey, ARGV[1])
if type(held) == 'string' then
  redis.call('DEL', lockKey)
  if redis.call('EXISTS', queueKey) == 0 then return 0 end
end

local waitersKey, fenceKey = KEYS[3], KEYS[4]
local claim, channel = string.match(ARGV[2], '^(%d+)|(.*)$')
local claimMs = tonumber(claim)

-- @include lockstate
-- @include publish
-- @include handoff

if type(held) ~= 'string' then
  local count, token, _, foreign = readLock(ARGV[1])
  if foreign then return {-3} end
  if not count then
    if token then return {-2} end
    return {-1}
  end
  -- This owner's string lock (_taken-lock.lua), sent here when its hold was
  -- not known as taken (a take resent through acquire.lua): a string lock
  -- has nobody queued since it was taken, so it goes as the fast path's does.
  redis.call('DEL', lockKey)
  if redis.call('EXISTS', queueKey) == 0 then return 0 end
end
if not handoff() then
  publish('f')
end
return 0
