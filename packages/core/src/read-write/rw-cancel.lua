-- rw-cancel: a waiter of a read-write lock gives up (timeout, abort, close): it leaves the
-- queue, a hand-off or grant made to this very request is undone, and whoever its queue place
-- held back is granted (readers behind a writer that gives up).
-- KEYS[1] lock hash   KEYS[2] waiter queue   KEYS[3] waiter table   KEYS[4] fence counter
-- KEYS[5] lease ends (sorted set, _rw-state.lua)
-- ARGV[1] owner id    ARGV[2] request id     ARGV[3] channel        ARGV[4] hand-off claim ms
-- Returns 1 when a hold taken by this request was undone, 0 otherwise (0 too when a key holds
--         data these scripts did not write: nothing written).
local lockKey, queueKey, waitersKey, fenceKey, expiryKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local owner, requestId, channel, claimMs = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

-- @include publish
-- @include rwstate

-- Every read that can find foreign data before the first write; the queue's
-- head is read again by promote() (this request may have been it).
if readQueue(true) == nil then return 0 end
local state = readState(owner)
if not state then return 0 end
redis.call('LREM', queueKey, 0, requestId)
redis.call('HDEL', waitersKey, requestId)
purge(state, owner)
local mine = state.mine
local undone = 0
if mine and mine.requestId == requestId then
  undone = 1
  if mine.count > 1 then
    mine.count = mine.count - 1
    -- Undone: no request of this owner is to be recognised as applied any more.
    mine.requestId = ''
    saveHolder(owner, mine)
    return 1
  end
  if dropHolders({owner}, state.writer) then state.writer = nil end
end
local grantedAny, busy = promote(state, anyHolder(), nil)
settle()
if undone == 1 and not grantedAny and (not busy or mine.kind == 'w') then publish('f') end
return undone
