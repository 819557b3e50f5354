-- take: a new owner's 'try' attempt (tryAcquire, and acquire's first attempt
-- before it listens), sent with only what taking a free lock touches: the
-- common uncontended case costs the server less for every KEYS and ARGV
-- element left out (each is a Lua string and a table slot on every call).
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] fence counter
-- ARGV[1] owner id
-- ARGV[2] '@' .. request id: the token's field (see _lock-state.lua), sent whole
-- ARGV[3] lease ms; not sent to the copy of this script made for the client's
--         default lease, which carries it in the line below (mutex-scripts.ts)
-- Returns token (an integer, > 0) when the caller took a free lock nobody queues for
--           (one hold, the whole lease: as acquire.lua's),
--         {0, retryAfterMs} when another owner holds the lock,
--         {-3} when the lock key holds data these scripts did not write (never modified),
--         nil when acquire.lua must decide, with nothing written here: the owner
--           holds the lock already (a resend of a take that was applied), the lock
--           is free but waiters are queued (a hand-off, which needs the waiter
--           table, the channel and the claim), or the holder's key has no TTL.
--           The caller then sends acquire.lua with the same request.
local leaseMs = ARGV[3]
local lockKey = KEYS[1]

-- As acquire.lua's fast path, the lease passed on as a string.
if redis.call('EXISTS', lockKey, KEYS[2]) == 0 then
  local token = redis.call('INCR', KEYS[3])
  redis.call('HSET', lockKey, ARGV[1], '1', ARGV[2], token)
  local expired = redis.pcall('PEXPIRE', lockKey, leaseMs)
  if type(expired) == 'table' then
    redis.call('DEL', lockKey)
    return expired
  end
  return token
end

-- @include lockstate

local count, heldToken, _, foreign = readLock(ARGV[1])
if foreign then return {-3} end
if heldToken and not count then
  local pttl = redis.call('PTTL', lockKey)
  if pttl > 0 then return {0, pttl} end
end
return false
