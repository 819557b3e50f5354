-- Fragment `semaphore` (the semaphore's): its state, purge and grants.
-- Expects: semKey, expiryKey, queueKey, waitersKey, fenceKey, channel, claimMs, publish().
-- Defines: isWrongType(), readSemaphore(), readExpired(), readQueue() (waiterqueue), purge(),
--   dropHolders(), grantWaiters(), grant().
-- State, in one hash slot:
--   semKey     hash   '#' -> permit count (no TTL), '=' -> permits in use (the sum of the
--                     holder entries), <owner> -> '<permits>|<token>', or '-' (an entry
--                     given back, deleted right after)
--   expiryKey  zset   <owner> -> server time (ms) its lease ends
--   queueKey   list   waiter ids, FIFO
--   waitersKey hash   waiter id -> expiresAt|leaseMs|permits|owner
--
-- Why: every operation reads the caller's own entry, the count, the permits in use and the
-- lease ends that passed, never every holder. Stopped at any refused command:
--   * the permits in use change in the same HSET as the entries they count (a holder leaving
--     is first turned into '-' with the new sum, then deleted);
--   * a lease end is written before its entry and deleted after it;
--   * every read that can find foreign data comes before the first write.
-- Upgrade: a hash of the previous layout has no '='; the first script that meets it adds the
-- sum, once. A '+' field (a count older still) goes then.
-- @include now
-- @include wrongtype
-- @include waiterqueue
-- @include inchunks

-- The permits of a holder entry; nil for '-' (given back) and for anything
-- that is no entry.
local function entryPermits(value)
  return tonumber(string.match(value, '^(%d+)|%d+$'))
end

-- A hash of the previous layout (no '='): the sum of its entries, false when
-- a field is no holder entry (foreign). Reads every entry: once per semaphore.
local function sumEntries()
  local fields = redis.call('HGETALL', semKey)
  local used = 0
  for i = 1, #fields, 2 do
    local field, value = fields[i], fields[i + 1]
    if field ~= '#' and field ~= '+' and value ~= '-' then
      local permits = entryPermits(value)
      if not permits then return false end
      used = used + permits
    end
  end
  return used
end

-- Returns the stored permit count (nil for a semaphore never used), the
-- permits in use (expired holders included until purge() drops them),
-- `foreign`: true when the key holds data these scripts did not write
-- (another type, a hash without the count, a field that is no holder entry),
-- never modified, and `owner`'s holder entry ('<permits>|<token>', nil when
-- it holds none; '#' for none). `upgrade`: true when the hash is of the previous layout
-- (write the sum with writeUsed() before anything else).
local function readSemaphore(owner)
  local values = redis.pcall('HMGET', semKey, '#', '=', owner)
  if isWrongType(values, 'HMGET', semKey, '#', '=', owner) then return nil, 0, true end
  local stored, used, mine = values[1], values[2], values[3]
  if not stored then
    if redis.call('EXISTS', semKey) == 1 then return nil, 0, true end
    return nil, 0, false
  end
  stored = tonumber(stored)
  if not stored then return nil, 0, true end
  if mine == '-' or owner == '#' then
    mine = nil
  elseif mine and not entryPermits(mine) then
    return nil, 0, true
  end
  local upgrade = false
  if used then
    used = tonumber(used)
    if not used then return nil, 0, true end
  else
    used = sumEntries()
    if not used then return nil, 0, true end
    upgrade = true
  end
  return stored, used, false, mine, upgrade
end

-- Stores the permits in use of a hash of the previous layout (readSemaphore's
-- `upgrade`): one HSET, so the sum is never apart from its entries.
local function writeUsed(used)
  redis.call('HSET', semKey, '=', used)
  redis.call('HDEL', semKey, '+')
end

-- The entries of `names` (HMGET, in calls of at most 1000 names: Lua's stack
-- limits how many arguments one call may take), nil where there is none.
local function entriesOf(names)
  local values = {}
  for first = 1, #names, 1000 do
    local part = redis.call('HMGET', semKey, unpack(names, first, math.min(first + 999, #names)))
    for i = 1, #part do values[first + i - 1] = part[i] end
  end
  return values
end

-- The owners whose lease ended by server time and their entries (reads:
-- call it before the first write); false when the expiry key is not a sorted
-- set, or an entry of theirs is no holder entry (foreign).
local function readExpired()
  local expired = redis.pcall('ZRANGEBYSCORE', expiryKey, '-inf', nowMs())
  if isWrongType(expired, 'ZRANGEBYSCORE', expiryKey, '-inf', nowMs()) then return false end
  if #expired == 0 then return expired, expired end
  local values = entriesOf(expired)
  for i = 1, #expired do
    local value = values[i]
    if value and value ~= '-' and not entryPermits(value) then return false end
  end
  return expired, values
end

-- Drops the holders `names` (their entries `values`, entriesOf(names), each
-- a holder entry, '-' or nil), the permits in use being `used`: each entry
-- turns into '-' in the HSET that lowers the sum, then the entries go, then
-- their lease ends. Returns the permits in use after.
local function dropHolders(names, values, used)
  local held, permitsOf, given = {}, {}, {}
  for i = 1, #names do
    local value = values[i]
    if value then
      if value ~= '-' then
        held[#held + 1] = names[i]
        permitsOf[#held] = entryPermits(value)
      end
      given[#given + 1] = names[i]
    end
  end
  -- Each HSET carries the sum as it stands after its own entries.
  for first = 1, #held, 1000 do
    local args = {}
    for i = first, math.min(first + 999, #held) do
      args[#args + 1] = held[i]
      args[#args + 1] = '-'
      used = used - permitsOf[i]
    end
    args[#args + 1] = '='
    args[#args + 1] = used
    redis.call('HSET', semKey, unpack(args))
  end
  callInChunks('HDEL', semKey, given)
  callInChunks('ZREM', expiryKey, names)
  return used
end

-- Drops every holder in `expired` (readExpired(), with their entries
-- `values`): a holder that crashed gives its permits back here, with nobody's
-- help. Returns the permits in use after and whether `owner` was among them.
local function purge(expired, values, used, owner)
  if #expired == 0 then return used, false end
  local ownerPurged = false
  for _, holder in ipairs(expired) do
    if holder == owner then ownerPurged = true end
  end
  return dropHolders(expired, values, used), ownerPurged
end

-- Makes `owner` a holder of `permits` for `ms`, `used` permits in use before;
-- returns its token. The lease end first: stopped before the entry, nothing
-- is held; the entry and the new sum in one HSET.
local function grant(owner, permits, ms, used)
  local token = redis.call('INCR', fenceKey)
  redis.call('ZADD', expiryKey, nowMs() + ms, owner)
  redis.call('HSET', semKey, owner, permits .. '|' .. token, '=', used + permits)
  return token
end

-- Hands permits to the waiters at the head of the queue, in order, while the
-- head's request fits: a large request at the head is never overtaken. Each
-- waiter handed permits gets a message naming it (it may start on it and
-- confirm later: its holder entry lasts the claim until then). `selfId`: the
-- calling request, granted its full lease and not told by message. `head`:
-- the queue's head as readQueue() read it, when nothing changed the queue
-- since (nil: read it here). Returns the permits in use after, the number of
-- waiters served, selfId's token when it was served, and whether the queue
-- is empty now.
-- A waiter's entry goes before its queue place: stopped between, the place
-- without an entry is dropped by the next call as a waiter gone quiet.
local function grantWaiters(permits, used, selfId, head)
  local served, selfToken, popped, empty = 0, nil, 0, false
  while true do
    local waiterId = head
    if waiterId == nil then waiterId = redis.call('LINDEX', queueKey, 0) end
    head = nil
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
      served = served + 1
      if waiterId == selfId then
        selfToken = grant(owner, wanted, tonumber(leaseMs), used)
      else
        local claim = math.min(claimMs, tonumber(leaseMs))
        local token = grant(owner, wanted, claim, used)
        publish('h|' .. waiterId .. '|' .. claim .. '|' .. token .. '|' .. nowMs())
      end
      used = used + wanted
    end
  end
  -- Entries left without a queue place go with the queue.
  if empty and popped > 0 then redis.call('DEL', waitersKey) end
  return used, served, selfToken, empty
end
