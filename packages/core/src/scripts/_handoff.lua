-- Fragment `handoff` (shared): hand a free lock to the first live waiter in the queue.
-- Expects: lockKey (already deleted by every caller), queueKey, waitersKey, fenceKey (one hash
--   slot), channel and claimMs (ARGV: how long a handed-off waiter has to confirm), publish().
-- Defines: handoff(): the waiter id that now holds an unconfirmed claim, or false when nobody
--   waits; handOnFree() (expects requestId, the caller's request): for a lock nobody holds,
--   waiters queued ahead of the caller go first: the handoff() to the first live one (the
--   caller's own id when every entry ahead had expired), or false when the lock is the
--   caller's to take (nobody queued, or the caller at the head, whose entry leaves the queue).
-- @include now

local function handoff()
  local popped = 0
  while true do
    local waiterId = redis.call('LPOP', queueKey)
    if not waiterId then
      -- Entries left without a queue place (expired ones) go with the queue.
      if popped > 0 then redis.call('DEL', waitersKey) end
      return false
    end
    popped = popped + 1
    local entry = redis.call('HGET', waitersKey, waiterId)
    redis.call('HDEL', waitersKey, waiterId)
    if entry then
      -- entry layout: expiresAt|leaseMs|requestId|owner (owner last: it may hold '|')
      local expiresAt, leaseMs, requestId, owner =
        string.match(entry, '^(%d+)|(%d+)|([^|]+)|(.+)$')
      if expiresAt and tonumber(expiresAt) > nowMs() then
        local token = redis.call('INCR', fenceKey)
        redis.call('HSET', lockKey, owner, '1', '@' .. requestId, token, '@c', '1')
        local claim = math.min(claimMs, tonumber(leaseMs))
        -- The key is new: refused, its PEXPIRE would leave a lock that never
        -- expires; the claim goes again (the waiter asks again) and the error is raised.
        local expired = redis.pcall('PEXPIRE', lockKey, claim)
        if type(expired) == 'table' then
          redis.call('DEL', lockKey)
          return error(expired)
        end
        -- The waiter may start on this message alone (token and claim length
        -- included) and confirm in the background. The server time lets it
        -- date the hand-off against its own last queued attempt (whose reply
        -- carried the server time too) instead of counting the claim from
        -- that attempt, which may be a whole lease earlier.
        publish('h|' .. waiterId .. '|' .. claim .. '|' .. token .. '|' .. nowMs())
        return waiterId
      end
    end
  end
end

local function handOnFree()
  local head = redis.call('LINDEX', queueKey, 0)
  if head == requestId then
    redis.call('LPOP', queueKey)
    redis.call('HDEL', waitersKey, requestId)
    return false
  end
  if not head then return false end
  -- No holder: clear the key (normally gone already) before the hand-off writes it.
  redis.call('DEL', lockKey)
  return handoff()
end
