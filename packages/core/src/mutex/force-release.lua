-- force-release: free the lock whoever holds it, then wake the next waiter.
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- ARGV[1] channel     ARGV[2] hand-off claim ms
-- Returns 1 when a lock was removed, 0 when there was none,
--         -3 when the key holds data these scripts did not write (left as it is).
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local channel, claimMs = ARGV[1], tonumber(ARGV[2])

-- @include lockstate
-- @include publish
-- @include handoff

local _, _, _, foreign = readLock(nil)
if foreign then return -3 end
local removed = redis.call('DEL', lockKey)
if not handoff() then
  publish('f')
end
return removed
