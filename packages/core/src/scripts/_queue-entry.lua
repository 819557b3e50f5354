-- Shared fragment, inlined where a script says `-- @include queueentry`.
-- Expects these locals in the including script: queueKey (the FIFO list of
-- waiter ids), waitersKey (the waiter table: waiter id -> entry), requestId
-- (the caller's waiter id).
-- joinQueue(ttl, entry) writes the caller's entry `expiresAt|` .. entry, valid
-- for ttl ms, and keeps both keys at least that long.
-- @include now
local function joinQueue(ttl, entry)
  -- A new entry (HSET added the field) takes a queue place; a refreshed one keeps its own.
  local added = redis.call('HSET', waitersKey, requestId, (nowMs() + ttl) .. '|' .. entry)
  if added == 1 then redis.call('RPUSH', queueKey, requestId) end
  for _, key in ipairs({queueKey, waitersKey}) do
    if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
  end
end
