-- Shared fragment of the read-write lock scripts, inlined where a script says
-- `-- @include rwstate`. Expects these locals in the including script:
--   lockKey (the lock hash), queueKey, waitersKey, fenceKey (all in one slot;
--   only promote() uses the last three), channel and claimMs (ARGV, for
--   promote()), publish() (the publish fragment, included before this one).
--
-- The lock hash has one field per holder:
--   owner id -> kind|count|expiresAt|token|requestId|claim
--   kind: 'r' reader or 'w' writer (at most one writer, and then readers only
--         through the writer's own downgrade); count: this owner's holds
--         (re-entries); expiresAt: server ms when this holder's lease ends
--         (each reader has its own lease); token: the hold's fencing token;
--         requestId: the last request applied for this owner ('' for none);
--         claim: '1' while a hand-off to this holder is unconfirmed.
-- The key's TTL is the latest expiresAt, so the hash goes with the last lease.
-- A holder past its expiresAt is gone: the writing scripts delete its field.
--
-- Queue entries (waiter table): waiterId -> expiresAt|leaseMs|requestId|kind|owner.
-- @include now

local function parseHolder(value)
  local kind, count, expiresAt, token, requestId, claim =
    string.match(value, '^([rw])|(%d+)|(%d+)|(%d+)|([^|]*)|([01])$')
  if not kind then return nil end
  return {kind = kind, count = tonumber(count), expiresAt = tonumber(expiresAt),
    token = tonumber(token), requestId = requestId, claim = claim == '1'}
end

-- Every live holder: returns holders (owner -> record), the writer's owner id
-- (nil when no writer holds) and the number of holders; nil when the key holds
-- data these scripts did not write (never modified). `prune` deletes the
-- fields of expired holders.
local function loadHolders(prune)
  local fields = redis.pcall('HGETALL', lockKey)
  if fields.err then return nil end
  local holders, writer, n = {}, nil, 0
  for i = 1, #fields, 2 do
    local h = parseHolder(fields[i + 1])
    if not h then return nil end
    if h.expiresAt > nowMs() then
      holders[fields[i]] = h
      n = n + 1
      if h.kind == 'w' then writer = fields[i] end
    elseif prune then
      redis.call('HDEL', lockKey, fields[i])
    end
  end
  return holders, writer, n
end

local function saveHolder(owner, h)
  redis.call('HSET', lockKey, owner, h.kind .. '|' .. h.count .. '|' .. h.expiresAt .. '|' .. h.token .. '|' ..
    h.requestId .. '|' .. (h.claim and '1' or '0'))
end

-- The key lives as long as its longest lease (a hash without fields is gone already).
local function settle(holders)
  local latest = 0
  for _, h in pairs(holders) do
    if h.expiresAt > latest then latest = h.expiresAt end
  end
  if latest > nowMs() then redis.call('PEXPIRE', lockKey, latest - nowMs()) end
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
-- and the new writer and holder count.
local function promote(holders, writer, n, self)
  local readers, readerClaim, token = {}, nil, nil
  local grantedAny = false
  while true do
    local waiterId = redis.call('LINDEX', queueKey, 0)
    if not waiterId then break end
    local entry = redis.call('HGET', waitersKey, waiterId)
    local expiresAt, leaseMs, requestId, kind, owner
    if entry then
      expiresAt, leaseMs, requestId, kind, owner = string.match(entry, '^(%d+)|(%d+)|([^|]+)|([rw])|(.+)$')
    end
    local live = expiresAt and tonumber(expiresAt) > nowMs()
    if live and kind == 'r' and writer then break end
    if live and kind == 'w' and n > 0 then break end
    redis.call('LPOP', queueKey)
    redis.call('HDEL', waitersKey, waiterId)
    if live then
      local claim = math.min(claimMs, tonumber(leaseMs))
      if kind == 'r' then
        token = token or readToken()
        holders[owner] = {kind = 'r', count = 1, expiresAt = nowMs() + claim, token = token,
          requestId = requestId, claim = true}
        if waiterId ~= self then
          readers[#readers + 1] = waiterId
          readerClaim = math.min(readerClaim or claim, claim)
        end
      else
        local writeToken = redis.call('INCR', fenceKey)
        holders[owner] = {kind = 'w', count = 1, expiresAt = nowMs() + claim, token = writeToken,
          requestId = requestId, claim = true}
        writer = owner
        if waiterId ~= self then
          publish('h|' .. waiterId .. '|' .. claim .. '|' .. writeToken .. '|' .. nowMs())
        end
      end
      saveHolder(owner, holders[owner])
      n = n + 1
      grantedAny = true
      if kind == 'w' then break end
    end
  end
  if #readers > 0 then
    publish('g|' .. readerClaim .. '|' .. token .. '|' .. nowMs() .. '|' .. table.concat(readers, '|'))
  end
  return grantedAny, writer, n
end
