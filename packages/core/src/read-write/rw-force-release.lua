-- rw-force-release: free one side of a read-write lock (or both) whoever holds it, then grant
-- the queue's head.
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- KEYS[5] lease ends (sorted set, _rw-state.lua)
-- ARGV[1] channel     ARGV[2] hand-off claim ms
-- ARGV[3] 'r' every reader, 'w' the writer, '*' both
-- Returns 1 when a hold was removed, 0 when there was none,
--         -3 when the lock key, its lease ends, the queue or (a waiter queued) the waiter
--           table holds data these scripts did not write (left as it is).
local lockKey, queueKey, waitersKey, fenceKey, expiryKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local channel, claimMs, kind = ARGV[1], tonumber(ARGV[2]), ARGV[3]

-- @include publish
-- @include rwstate

-- '' names no holder: only the writer and the expired holders are read.
local head = readQueue(false)
if head == nil then return -3 end
local state = readState('')
if not state then return -3 end
state.head = head
purge(state)
local removed = 0
local gone = {}
if kind == 'w' then
  if state.writer then gone[1] = state.writer end
else
  -- Every holder has a lease end: the sorted set names them all (freeing
  -- them reads each one, once).
  local members = redis.call('ZRANGEBYSCORE', expiryKey, '(0', '+inf')
  for _, holder in ipairs(members) do
    if kind == '*' or holder ~= state.writer then gone[#gone + 1] = holder end
  end
end
if #gone > 0 then
  removed = 1
  if dropHolders(gone, state.writer) then state.writer = nil end
end
local grantedAny = promote(state, anyHolder(), nil)
settle()
if not grantedAny then publish('f') end
return removed
