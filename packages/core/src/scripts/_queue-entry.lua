-- Shared fragment, inlined where a script says `-- @include queueentry`.
-- Expects these locals in the including script: queueKey (the FIFO list of
-- waiter ids), waitersKey (the waiter table: waiter id -> entry), requestId
-- (the caller's waiter id).
-- joinQueue(ttl, entry[, markKey]) writes the caller's entry `expiresAt|` ..
-- entry, valid for ttl ms, and keeps both keys at least that long. `markKey`
-- (a mutex's lock hash, which exists whenever a waiter queues for it): when
-- this entry creates the queue, the hash gets the field '.' first, so its
-- holder's release-taken.lua sees that waiters may be queued without reading
-- the queue key (see _lock-state.lua). Before the push: a script stopped in
-- between leaves a mark without a queue, which only costs that release a
-- second script, never a queue its release would overlook.
-- @include now

-- Gives `key` at least `ttl` ms right after a write to it. A PEXPIRE the ACL
-- refuses must not leave a key that never expires (a new one has no TTL yet,
-- and the writes before a refused command stay): `undo` takes the write back,
-- then the server's error is raised.
local function expireOrUndo(key, ttl, undo)
  local reply = redis.pcall('PEXPIRE', key, ttl)
  if type(reply) == 'table' and reply.err then
    undo()
    return error(reply)
  end
end

local function joinQueue(ttl, entry, markKey)
  local extendWaiters = redis.call('PTTL', waitersKey) < ttl
  local queuePttl = redis.call('PTTL', queueKey)
  local extendQueue = queuePttl < ttl
  -- A new entry (HSET added the field) takes a queue place; a refreshed one keeps its own.
  local added = redis.call('HSET', waitersKey, requestId, (nowMs() + ttl) .. '|' .. entry)
  if extendWaiters then
    expireOrUndo(waitersKey, ttl, function() redis.call('HDEL', waitersKey, requestId) end)
  end
  if added == 1 then
    -- PTTL -2: no queue key, so this push creates it.
    if markKey and queuePttl == -2 then redis.call('HSET', markKey, '.', '1') end
    redis.call('RPUSH', queueKey, requestId)
  end
  if extendQueue then
    expireOrUndo(queueKey, ttl, function()
      redis.call('LREM', queueKey, -1, requestId)
      redis.call('HDEL', waitersKey, requestId)
    end)
  end
end
