-- rw-release: drop one hold of a read-write lock; a holder's last one leaves, and the queue's
-- head is granted (every reader at the head at once).
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- KEYS[5] lease ends (sorted set, _rw-state.lua)
-- ARGV[1] owner id    ARGV[2] request id     ARGV[3] channel        ARGV[4] hand-off claim ms
-- ARGV[5] '0' to drop one hold; '1' or absent to drop every hold of this owner at once
-- Returns {1, remainingHolds} on success (0: the lock left this owner),
--         {-1} when nobody holds, {-2} when others hold but not this owner,
--         {-3} when the lock key, its lease ends, the queue or (a waiter queued) the waiter
--           table holds data these scripts did not write (never modified).
local lockKey, queueKey, waitersKey, fenceKey, expiryKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, requestId, channel, claimMs = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local all = ARGV[5] ~= '0'

-- @include publish
-- @include rwstate

-- Every read that can find foreign data before the first write.
local head = readQueue(false)
if head == nil then return {-3} end
local state = readState(owner)
if not state then return {-3} end
state.head = head
purge(state, owner)
local mine = state.mine
if not mine then
  if anyHolder() then return {-2} end
  return {-1}
end
if mine.requestId == requestId then
  -- A resend of a release that was applied: report the same outcome.
  return {1, mine.count}
end
if mine.count > 1 and not all then
  mine.count = mine.count - 1
  mine.requestId = requestId
  saveHolder(owner, mine)
  return {1, mine.count}
end
if dropHolders({owner}, state.writer) then state.writer = nil end
local grantedAny, busy = promote(state, anyHolder(), nil)
settle()
-- Nobody queued could be granted, but the lock opened up: wake whoever listens.
if not grantedAny and (not busy or mine.kind == 'w') then publish('f') end
return {1, 0}
