-- rw-force-release: free one side of a read-write lock (or both) whoever
-- holds it, then grant the queue's head.
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- ARGV[1] channel     ARGV[2] hand-off claim ms
-- ARGV[3] 'r' every reader, 'w' the writer, '*' both
-- Returns 1 when a hold was removed, 0 when there was none,
--         -3 when the key holds data these scripts did not write (left as it is).
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local channel, claimMs, kind = ARGV[1], tonumber(ARGV[2]), ARGV[3]

-- @include publish
-- @include rwstate

local holders, writer, n = loadHolders(true)
if not holders then return -3 end
local removed = 0
for owner, h in pairs(holders) do
  if kind == '*' or h.kind == kind then
    redis.call('HDEL', lockKey, owner)
    holders[owner] = nil
    n = n - 1
    if writer == owner then writer = nil end
    removed = 1
  end
end
local grantedAny
grantedAny, writer, n = promote(holders, writer, n, nil)
settle(holders)
if not grantedAny then publish('f') end
return removed
