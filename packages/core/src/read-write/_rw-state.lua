-- Fragment `rwstate` (the read-write lock's): the lock's holders, lease ends and queue.
-- Expects: lockKey (the lock hash), expiryKey (its sorted set), queueKey, waitersKey, fenceKey
--   (one slot; only readQueue() and promote() use the last three), channel, claimMs,
--   publish() (included before this one).
-- Defines: readState(), readQueue() (waiterqueue), purge(), dropHolders(), saveHolder(),
--   anyHolder(), firstLeaseLeft(), readToken(), promote().
-- The lock hash: owner id -> kind|count|token|requestId|claim (kind 'r' reader or 'w' writer;
--   count: this owner's holds; token: its fencing token; requestId: the last request applied,
--   '' for none; claim: '1' while a hand-off to it is unconfirmed);
--   '!' -> the writer's owner id, written and deleted with the writer's entry.
-- The sorted set: owner id -> server ms its lease ends; '#' .. owner id -> minus a reader's
--   token (scores <= 0 never end a lease: the smallest is the greatest token).
-- Queue entries (waiter table): waiterId -> expiresAt|leaseMs|requestId|kind|owner.
--
-- Why: at most one writer, and readers beside it only through its own downgrade; '!' spares a
-- reader looking at other holders. A holder past its lease end is gone: the writing scripts
-- drop it, found by a range of the sorted set, never by reading every holder. Both keys live as
-- long as the longest lease. A lease end is written before its entry and deleted after it, so a
-- script stopped at a refused command leaves no entry without a lease end (a lease end without
-- an entry only keeps a writer out until it ends). Every read that can find foreign data comes
-- before the first write. Upgrade: the layout before this one kept each lease end in the entry
-- (kind|count|expiresAt|token|requestId|claim) and had no sorted set; such a hash is converted
-- once, and entries keep that shape until their owner's next write, parsed either way.
-- @include now
-- @include wrongtype
-- @include waiterqueue
-- @include inchunks

local function parseHolder(value)
  local kind, count, token, requestId, claim = string.match(value, '^([rw])|(%d+)|(%d+)|([^|]*)|([01])$')
  if not kind then
    local _
    kind, count, _, token, requestId, claim = string.match(value, '^([rw])|(%d+)|(%d+)|(%d+)|([^|]*)|([01])$')
    if not kind then return nil end
  end
  return {kind = kind, count = tonumber(count), token = tonumber(token), requestId = requestId, claim = claim == '1'}
end

-- Both keys live as long as the longest lease (the sorted set first: the
-- hash never outlives it).
local function settle()
  local last = redis.call('ZRANGE', expiryKey, -1, -1, 'WITHSCORES')
  if last[2] and tonumber(last[2]) > nowMs() then
    local ttl = tonumber(last[2]) - nowMs()
    redis.call('PEXPIRE', expiryKey, ttl)
    redis.call('PEXPIRE', lockKey, ttl)
  end
end

-- A hash of the previous layout (no sorted set): every live holder gets its
-- lease end (and a reader its token) in the sorted set, the writer its '!';
-- entries past their lease go first. Returns true and the writer (nil for
-- none); false when the key holds data these scripts did not write (nothing
-- written).
local function convert()
  local fields = redis.pcall('HGETALL', lockKey)
  if isWrongType(fields, 'HGETALL', lockKey) then return false end
  local scores, dead, writer = {}, {}, nil
  for i = 1, #fields, 2 do
    local field, value = fields[i], fields[i + 1]
    local kind, _, expiresAt, token = string.match(value, '^([rw])|(%d+)|(%d+)|(%d+)|[^|]*|[01]$')
    if field == '!' then
      dead[#dead + 1] = field
    elseif kind and tonumber(expiresAt) > nowMs() then
      scores[#scores + 1] = expiresAt
      scores[#scores + 1] = field
      if kind == 'r' then
        scores[#scores + 1] = -tonumber(token)
        scores[#scores + 1] = '#' .. field
      else
        writer = field
      end
    elseif kind or parseHolder(value) then
      -- Past its lease (an entry of this layout without a lease end: its
      -- lease ended with the sorted set).
      dead[#dead + 1] = field
    else
      return false
    end
  end
  callInChunks('HDEL', lockKey, dead)
  if writer then redis.call('HSET', lockKey, '!', writer) end
  callInChunks('ZADD', expiryKey, scores)
  settle()
  return true, writer
end

-- Reads the caller's entry, the writer and the holders whose lease ended,
-- before any write. Returns a state {mine (owner's parsed entry, nil for
-- none), writer (owner id, nil for none), expired (owner ids)}; nil when a
-- key holds data these scripts did not write (never modified).
local function readState(owner)
  local values = redis.pcall('HMGET', lockKey, owner, '!')
  if isWrongType(values, 'HMGET', lockKey, owner, '!') then return nil end
  local expired = redis.pcall('ZRANGEBYSCORE', expiryKey, '(0', nowMs())
  if isWrongType(expired, 'ZRANGEBYSCORE', expiryKey, '(0', nowMs()) then return nil end
  local mine = values[1] and parseHolder(values[1])
  if values[1] and not mine then return nil end
  local state = {mine = mine or nil, writer = values[2] or nil, expired = expired}
  if redis.call('EXISTS', lockKey, expiryKey) == 1 and redis.call('EXISTS', expiryKey) == 0 then
    local ok, writer = convert()
    if not ok then return nil end
    state.writer = writer
  end
  return state
end

-- Drops the holders `names` (entries first, then lease ends and tokens). The
-- writer's '!' goes in the HDEL of its entry. Returns whether the writer went.
local function dropHolders(names, writer)
  local fields, members, writerGone = {}, {}, false
  for _, name in ipairs(names) do
    fields[#fields + 1] = name
    if name == writer then
      fields[#fields + 1] = '!'
      writerGone = true
    end
    members[#members + 1] = name
    members[#members + 1] = '#' .. name
  end
  callInChunks('HDEL', lockKey, fields)
  callInChunks('ZREM', expiryKey, members)
  return writerGone
end

-- Drops the holders whose lease ended (state.expired); state.mine and
-- state.writer forget them.
local function purge(state, owner)
  if #state.expired == 0 then return end
  if dropHolders(state.expired, state.writer) then state.writer = nil end
  for _, name in ipairs(state.expired) do
    if name == owner then state.mine = nil end
  end
end

-- True while anyone holds (a lease end, after purge(), is a live one).
local function anyHolder()
  return redis.call('EXISTS', expiryKey) == 1
end

-- Writes owner's entry `h`, its lease end `endsAt` first (with a reader's token).
local function saveHolder(owner, h, endsAt)
  if endsAt then
    if h.kind == 'r' then
      redis.call('ZADD', expiryKey, endsAt, owner, -h.token, '#' .. owner)
    else
      redis.call('ZADD', expiryKey, endsAt, owner)
    end
  end
  local value = h.kind .. '|' .. h.count .. '|' .. h.token .. '|' .. h.requestId .. '|' .. (h.claim and '1' or '0')
  if h.kind == 'w' then
    redis.call('HSET', lockKey, owner, value, '!', owner)
  else
    redis.call('HSET', lockKey, owner, value)
  end
end

-- Milliseconds until the first lease ends (nil when nobody holds).
local function firstLeaseLeft()
  local first = redis.call('ZRANGEBYSCORE', expiryKey, '(0', '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if first[2] then return tonumber(first[2]) - nowMs() end
  return nil
end

-- A reader's token: the slot's fencing counter now. Every writer token issued
-- before is <= it, every writer token issued after is > it (INCR).
local function readToken()
  return tonumber(redis.call('GET', fenceKey) or '0')
end

-- Grants the head of the queue: every reader at the head while no writer
-- holds, or one writer when nobody holds. Each grant is a claim of at most
-- claimMs, confirmed by the waiter. ONE message names every reader granted
-- ('g'), or the writer ('h'); `self` (the calling script's own request, which
-- its reply answers) is left out of it. Returns whether anyone was granted,
-- and the new writer and whether anyone holds; state.mine is the caller's
-- entry when its own request was granted (with `selfLease`, its full lease).
-- state.head: the queue's head as readQueue() read it, when nothing changed
-- the queue since (nil: read here).
local function promote(state, busy, self, owner, selfLease)
  local readers, readerClaim, token = {}, nil, nil
  local grantedAny = false
  while true do
    local waiterId = state.head
    if waiterId == nil then waiterId = redis.call('LINDEX', queueKey, 0) end
    state.head = nil
    if not waiterId then break end
    local entry = redis.call('HGET', waitersKey, waiterId)
    local expiresAt, leaseMs, requestId, kind, waiter
    if entry then
      expiresAt, leaseMs, requestId, kind, waiter = string.match(entry, '^(%d+)|(%d+)|([^|]+)|([rw])|(.+)$')
    end
    local live = expiresAt and tonumber(expiresAt) > nowMs()
    if live and kind == 'r' and state.writer then break end
    if live and kind == 'w' and busy then break end
    redis.call('LPOP', queueKey)
    redis.call('HDEL', waitersKey, waiterId)
    if live then
      local claim = math.min(claimMs, tonumber(leaseMs))
      local isSelf = waiterId == self
      local h
      if kind == 'r' then
        token = token or readToken()
        h = {kind = 'r', count = 1, token = token, requestId = requestId, claim = not isSelf}
        if not isSelf then
          readers[#readers + 1] = waiterId
          readerClaim = math.min(readerClaim or claim, claim)
        end
      else
        h = {kind = 'w', count = 1, token = redis.call('INCR', fenceKey), requestId = requestId, claim = not isSelf}
        state.writer = waiter
        if not isSelf then
          publish('h|' .. waiterId .. '|' .. claim .. '|' .. h.token .. '|' .. nowMs())
        end
      end
      saveHolder(waiter, h, nowMs() + (isSelf and selfLease or claim))
      if isSelf and waiter == owner then state.mine = h end
      busy = true
      grantedAny = true
      if kind == 'w' then break end
    end
  end
  if #readers > 0 then
    publish('g|' .. readerClaim .. '|' .. token .. '|' .. nowMs() .. '|' .. table.concat(readers, '|'))
  end
  return grantedAny, busy
end
