-- Fragment `queueentry` (shared): queue the caller as a waiter.
-- Expects: queueKey (FIFO list of waiter ids), waitersKey (waiter id -> entry), requestId.
-- Defines: joinQueue(ttl, entry): writes the caller's entry `expiresAt|` .. entry, valid for
--   ttl ms, and keeps both keys at least that long.
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

local function joinQueue(ttl, entry)
  local extendWaiters = redis.call('PTTL', waitersKey) < ttl
  local extendQueue = redis.call('PTTL', queueKey) < ttl
  -- A new entry (HSET added the field) takes a queue place; a refreshed one keeps its own.
  local added = redis.call('HSET', waitersKey, requestId, (nowMs() + ttl) .. '|' .. entry)
  if extendWaiters then
    expireOrUndo(waitersKey, ttl, function() redis.call('HDEL', waitersKey, requestId) end)
  end
  if added == 1 then redis.call('RPUSH', queueKey, requestId) end
  if extendQueue then
    expireOrUndo(queueKey, ttl, function()
      redis.call('LREM', queueKey, -1, requestId)
      redis.call('HDEL', waitersKey, requestId)
    end)
  end
end
