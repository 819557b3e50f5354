-- Fragment `waiterqueue` (shared: read-write lock, semaphore): the queue's foreign-data check.
-- Expects: queueKey (FIFO list of waiter ids), waitersKey (hash: waiter id -> entry).
-- Defines: readQueue(): whether either key holds data these scripts did not write.
--
-- Why: made before a script's first write; a script stopped by WRONGTYPE after writing would
-- leave its writes behind.
-- @include wrongtype

-- The queue's head (false when nobody waits), read before the first write
-- and handed to the code that grants waiters; nil when the queue, or the
-- waiter table this call would use (a waiter is queued, or `usesTable`: the
-- caller joins or cancels), is a key of another type (foreign data, never
-- modified).
local function readQueue(usesTable)
  local head = redis.pcall('LINDEX', queueKey, 0)
  if isWrongType(head, 'LINDEX', queueKey, 0) then return nil end
  if head or usesTable then
    -- Any read of a hash tells another type (HEXISTS: a command the README's ACL allows).
    local probe = redis.pcall('HEXISTS', waitersKey, '')
    if isWrongType(probe, 'HEXISTS', waitersKey, '') then return nil end
  end
  return head
end
