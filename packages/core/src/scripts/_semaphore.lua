-- Shared fragment, inlined where a script says `-- @include semaphore`.
-- A semaphore's state, all in one hash slot:
--   semKey     hash   '#' -> permit count (lives as long as the semaphore, no TTL),
--                     <owner> -> '<permits>|<token>'
--   expiryKey  zset   <owner> -> server time (ms) its lease ends
--   queueKey   list   waiter ids, FIFO
--   waitersKey hash   waiter id -> expiresAt|leaseMs|permits|owner
-- Expects semKey, expiryKey, queueKey, waitersKey, fenceKey, channel, claimMs
-- and publish() (the publish fragment, included before this one).
-- Defines isWrongType(), readSemaphore(), readExpired(), purge(), grantWaiters(), grant().
--
-- A script may be stopped after any of its writes (a command the user's ACL
-- refuses raises an error there, and what was written stays), so:
--   * the permits in use are never stored: they are the sum of the holders'
--     permits, read with the holders, so no count can disagree with them;
--   * a holder's lease end is written before its entry, and its entry is
--     deleted before its lease end: a holder entry always has a lease end, and
--     a lease end left without an entry frees nothing and is purged like any;
--   * every read that can find foreign data comes before the first write.
-- A '+' field (the permits-in-use count older versions kept) is ignored.
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
-- permits in use (the sum of every holder's, expired ones included until
-- purge() drops them), `foreign`: true when the key holds data these scripts
-- did not write (another type, a hash without the count, a field that is no
-- holder entry), never modified, `owner`'s holder entry ('<permits>|<token>',
-- nil when it holds none), and the holders (owner -> permits).
local function readSemaphore(owner)
  local fields = redis.pcall('HGETALL', semKey)
  if isWrongType(fields, 'HGETALL', semKey) then return nil, 0, true, nil, {} end
  local stored, used, mine, holders = nil, 0, nil, {}
  for i = 1, #fields, 2 do
    local field, value = fields[i], fields[i + 1]
    if field == '#' then
      stored = tonumber(value)
      if not stored then return nil, 0, true, nil, {} end
    elseif field ~= '+' then
      local permits = tonumber(string.match(value, '^(%d+)|%d+$'))
      if not permits then return nil, 0, true, nil, {} end
      holders[field] = permits
      used = used + permits
      if field == owner then mine = value end
    end
  end
  if not stored and #fields > 0 then return nil, 0, true, nil, {} end
  return stored, used, false, mine, holders
end

-- The owners whose lease ended by server time (a read: call it before the
-- first write); false when the expiry key is not a sorted set (foreign).
local function readExpired()
  local expired = redis.pcall('ZRANGEBYSCORE', expiryKey, '-inf', nowMs())
  if isWrongType(expired, 'ZRANGEBYSCORE', expiryKey, '-inf', nowMs()) then return false end
  return expired
end

-- Runs `command key ...names` in calls of at most 1000 names (Lua's stack
-- limits how many arguments one call may take).
local function callInChunks(command, key, names)
  for first = 1, #names, 1000 do
    redis.call(command, key, unpack(names, first, math.min(first + 999, #names)))
  end
end

-- Drops every holder in `expired` (readExpired()): a holder that crashed gives
-- its permits back here, with nobody's help. Entries go before lease ends.
-- Returns the permits freed and whether `owner` was among the holders purged;
-- `holders` (readSemaphore()) loses them.
local function purge(expired, holders, owner)
  if #expired == 0 then return 0, false end
  local freed, ownerPurged, entries = 0, false, {}
  for _, holder in ipairs(expired) do
    local permits = holders[holder]
    if permits then
      freed = freed + permits
      holders[holder] = nil
      entries[#entries + 1] = holder
    end
    if holder == owner then ownerPurged = true end
  end
  callInChunks('HDEL', semKey, entries)
  callInChunks('ZREM', expiryKey, expired)
  return freed, ownerPurged
end

-- Makes `owner` a holder of `permits` for `ms`; returns its token. The lease
-- end first: stopped before the entry, nothing is held.
local function grant(owner, permits, ms)
  local token = redis.call('INCR', fenceKey)
  redis.call('ZADD', expiryKey, nowMs() + ms, owner)
  redis.call('HSET', semKey, owner, permits .. '|' .. token)
  return token
end

-- Hands permits to the waiters at the head of the queue, in order, while the
-- head's request fits: a large request at the head is never overtaken. Each
-- waiter handed permits gets a message naming it (it may start on it and
-- confirm later: its holder entry lasts the claim until then). `selfId`: the
-- calling request, granted its full lease and not told by message. Returns
-- the permits in use after, the number of waiters served, selfId's token
-- when it was served, and whether the queue is empty now.
-- A waiter's entry goes before its queue place: stopped between, the place
-- without an entry is dropped by the next call as a waiter gone quiet.
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
      if entry then redis.call('HDEL', waitersKey, waiterId) end
      redis.call('LPOP', queueKey)
    else
      wanted = tonumber(wanted)
      if used + wanted > permits then break end
      redis.call('HDEL', waitersKey, waiterId)
      redis.call('LPOP', queueKey)
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
