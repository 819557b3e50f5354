-- inbox claim: makes the caller the processor of a key that has pending messages and no processor.
-- KEYS[1] queue   KEYS[2] lease   KEYS[3] index   KEYS[4] fence counter
-- ARGV[1] owner   ARGV[2] lease ms   ARGV[3] the key (index member)
-- Returns {1, token} when claimed, {0} when the key has a processor or nothing pending (its
--         index record is corrected), {-3} when a key holds data these scripts did not write.
--
-- Why: recover() reads candidates from the index, which may be stale by the time this runs;
-- the claim decides on the queue and the lease themselves, in one script.
-- @include now
-- @include wrongtype
local queueKey, leaseKey, indexKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, leaseMs, member = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local head = redis.pcall('LINDEX', queueKey, 0)
if isWrongType(head, 'LINDEX', queueKey, 0) then return {-3} end
local lease = redis.pcall('GET', leaseKey)
if isWrongType(lease, 'GET', leaseKey) then return {-3} end
if lease and not string.match(lease, '^i1|%d+|.+$') then return {-3} end
if not head then
  if not lease then redis.call('ZREM', indexKey, member) end
  return {0}
end
if lease then
  local pttl = redis.call('PTTL', leaseKey)
  redis.call('ZADD', indexKey, nowMs() + math.max(pttl, 0), member)
  return {0}
end
local token = redis.call('INCR', fenceKey)
redis.call('SET', leaseKey, 'i1|' .. token .. '|' .. owner, 'PX', leaseMs)
redis.call('ZADD', indexKey, nowMs() + leaseMs, member)
return {1, token}
