-- force-release: free the lock whoever holds it, then wake the next waiter.
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- ARGV[1] channel     ARGV[2] hand-off claim ms
-- Returns 1 when a lock was removed, 0 when there was none.
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local channel, claimMs = ARGV[1], tonumber(ARGV[2])

-- @include publish
-- @include handoff

local removed = redis.call('DEL', lockKey)
if not handoff() then
  publish('f')
end
return removed
