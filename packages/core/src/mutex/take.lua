-- take: a new owner's 'try' attempt (tryAcquire, and acquire's first attempt before it
-- listens) with only what taking a free lock touches.
-- KEYS[1] lock (a string when this script grants it)   KEYS[2] waiter queue
-- KEYS[3] fence counter
-- ARGV[1] owner id .. '@' .. request id .. '|': the string lock but its token
-- ARGV[2] lease ms
-- Returns token (an integer, > 0) when the caller took a free lock nobody queues for
--           (one hold, the whole lease: as acquire.lua's),
--         {0, retryAfterMs} when another owner holds the lock,
--         {-3} when the lock key holds data these scripts did not write (never modified),
--         nil when acquire.lua must decide, with nothing written here: the owner
--           holds the lock already (a resend of a take that was applied), the lock
--           is free but waiters are queued (a hand-off, which needs the waiter
--           table, the channel and the claim), or the holder's key has no TTL.
--           The caller then sends acquire.lua with the same request.
--
-- Why: the string layout (_taken-lock.lua) and its fewer KEYS and ARGV cost the server less
-- per uncontended cycle; ARCHITECTURE.md gives the measurement that keeps it.
local leaseMs = ARGV[2]
local lockKey = KEYS[1]

-- The grant is the string lock of _taken-lock.lua: one SET with the lease,
-- which either writes the lock with its TTL or is refused whole (the counter
-- then has moved on, which only skips a token). The lease goes on as a string.
-- Lua prints a number from 1e14 on in exponent form, digits lost: such a
-- token is printed whole by string.format (exact below 2^53, as the client's).
if redis.call('EXISTS', lockKey, KEYS[2]) == 0 then
  local token = redis.call('INCR', KEYS[3])
  redis.call('SET', lockKey, ARGV[1] .. (token < 1e14 and token or string.format('%d', token)), 'PX', leaseMs)
  return token
end

-- @include lockstate

local count, heldToken, _, foreign = readLock(string.match(ARGV[1], '^[^@|]+'))
if foreign then return {-3} end
if heldToken and not count then
  local pttl = redis.call('PTTL', lockKey)
  if pttl > 0 then return {0, pttl} end
end
return false
