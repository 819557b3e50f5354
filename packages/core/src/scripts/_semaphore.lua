-- Shared fragment, inlined where a script says `-- @include semaphore`.
-- A semaphore's state, all in one hash slot:
--   semKey     hash   '#' -> permit count (lives as long as the semaphore, no TTL),
--                     '+' -> permits in use, <owner> -> '<permits>|<token>'
--   expiryKey  zset   <owner> -> server time (ms) its lease ends
--   queueKey   list   waiter ids, FIFO
--   waitersKey hash   waiter id -> expiresAt|leaseMs|permits|owner
-- Expects semKey, expiryKey, queueKey, waitersKey, fenceKey, channel, claimMs
-- and publish() (the publish fragment, included before this one).
-- Defines isWrongType(), readSemaphore(), purge(), grantWaiters(), grant().
-- @include now

-- True for the error reply of a pcall that met a key of another type. Any
-- other error (a missing ACL permission, OOM) is not foreign data: it is
-- raised again, so the caller sees the server's own error.
local function isWrongType(reply, command, key, ...)
  if type(reply) ~= 'table' or not reply.err then return false end
  if string.find(reply.err, 'WRONGTYPE', 1, true) then return true end
  redis.call(command, key, ...) -- raises the server's own error
  error(reply)
end

-- Returns the stored permit count (nil for a semaphore never used), the
-- permits in use, `foreign`: true when the key holds data these scripts did
-- not write (another type, or a hash without the count), never modified, and
-- `owner`'s holder entry ('<permits>|<token>', nil when it holds none), read
-- in the same call.
local function readSemaphore(owner)
  local cfg = redis.pcall('HMGET', semKey, '#', '+', owner)
  if isWrongType(cfg, 'HMGET', semKey, '#', '+', owner) then return nil, 0, true, nil end
  local stored = tonumber(cfg[1])
  if not stored then
    return nil, 0, redis.call('EXISTS', semKey) == 1, nil
  end
  return stored, tonumber(cfg[2]) or 0, false, cfg[3] or nil
end

-- Drops every holder whose lease ended by server time: a holder that crashed
-- gives its permits back here, with nobody's help. Returns the permits freed
-- (false when the expiry key is not a sorted set: foreign), and whether
-- `owner` was among the holders purged.
local function purge(owner)
  local expired = redis.pcall('ZRANGEBYSCORE', expiryKey, '-inf', nowMs())
  if isWrongType(expired, 'ZRANGEBYSCORE', expiryKey, '-inf', nowMs()) then return false end
  if #expired == 0 then return 0, false end
  local freed, ownerPurged = 0, false
  for _, holder in ipairs(expired) do
    local held = redis.call('HGET', semKey, holder)
    if held then
      freed = freed + tonumber(string.match(held, '^(%d+)'))
      redis.call('HDEL', semKey, holder)
    end
    if holder == owner then ownerPurged = true end
  end
  redis.call('ZREMRANGEBYSCORE', expiryKey, '-inf', nowMs())
  if freed > 0 then redis.call('HINCRBY', semKey, '+', -freed) end
  return freed, ownerPurged
end

-- Makes `owner` a holder of `permits` for `ms`; returns its token.
local function grant(owner, permits, ms)
  local token = redis.call('INCR', fenceKey)
  redis.call('HSET', semKey, owner, permits .. '|' .. token)
  redis.call('HINCRBY', semKey, '+', permits)
  redis.call('ZADD', expiryKey, nowMs() + ms, owner)
  return token
end

-- Hands permits to the waiters at the head of the queue, in order, while the
-- head's request fits: a large request at the head is never overtaken. Each
-- waiter handed permits gets a message naming it (it may start on it and
-- confirm later: its holder entry lasts the claim until then). `selfId`: the
-- calling request, granted its full lease and not told by message. Returns
-- the permits in use after, the number of waiters served, selfId's token
-- when it was served, and whether the queue is empty now.
local function grantWaiters(permits, used, selfId)
  local served, selfToken, popped, empty = 0, nil, 0, false
  while true do
    local waiterId = redis.call('LINDEX', queueKey, 0)
    if not waiterId then
      empty = true
      break
    end
    popped = popped + 1
    local entry = redis.call('HGET', waitersKey, waiterId)
    local expiresAt, leaseMs, wanted, owner
    if entry then
      expiresAt, leaseMs, wanted, owner = string.match(entry, '^(%d+)|(%d+)|(%d+)|(.+)$')
    end
    if not expiresAt or tonumber(expiresAt) <= nowMs() or tonumber(wanted) > permits then
      -- A waiter gone quiet, or one asking more than the count now allows
      -- (its next attempt learns why): it must not block the queue.
      redis.call('LPOP', queueKey)
      if entry then redis.call('HDEL', waitersKey, waiterId) end
    else
      wanted = tonumber(wanted)
      if used + wanted > permits then break end
      redis.call('LPOP', queueKey)
      redis.call('HDEL', waitersKey, waiterId)
      used = used + wanted
      served = served + 1
      if waiterId == selfId then
        selfToken = grant(owner, wanted, tonumber(leaseMs))
      else
        local claim = math.min(claimMs, tonumber(leaseMs))
        local token = grant(owner, wanted, claim)
        publish('h|' .. waiterId .. '|' .. claim .. '|' .. token .. '|' .. nowMs())
      end
    end
  end
  -- Entries left without a queue place go with the queue.
  if empty and popped > 0 then redis.call('DEL', waitersKey) end
  return used, served, selfToken, empty
end
