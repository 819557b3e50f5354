-- inbox inspect: what a key's queue and lease hold now (read only).
-- KEYS[1] queue   KEYS[2] lease   KEYS[3] counts (hash: 'n' -> messages pending)
-- ARGV    none
-- Returns {pending, head seq, tail seq, head posted ms, server ms, lease token, lease ttl ms}:
--           seqs and posted 0 for an empty queue, token 0 and ttl -2 without a lease;
--         {-3} when a key holds data these scripts did not write.
--
-- Why: one read for drain(), pending() and the CLI, at one instant of the server's.
-- @include now
-- @include wrongtype
local queueKey, leaseKey, countsKey = KEYS[1], KEYS[2], KEYS[3]
local head = redis.pcall('LINDEX', queueKey, 0)
if isWrongType(head, 'LINDEX', queueKey, 0) then return {-3} end
local pending = redis.pcall('HGET', countsKey, 'n')
if isWrongType(pending, 'HGET', countsKey, 'n') then return {-3} end
pending = head and tonumber(pending or '0') or 0
local lease = redis.pcall('GET', leaseKey)
if isWrongType(lease, 'GET', leaseKey) then return {-3} end
local token, ttl = 0, -2
if lease then
  token = tonumber(string.match(lease, '^i1|(%d+)|.+$'))
  if not token then return {-3} end
  ttl = redis.call('PTTL', leaseKey)
end
local headSeq, tailSeq, headPosted = 0, 0, 0
if pending > 0 then
  local seq, posted = string.match(head, '^(%d+)|(%d+)|')
  headSeq, headPosted = tonumber(seq) or 0, tonumber(posted) or 0
  tailSeq = tonumber(string.match(redis.call('LINDEX', queueKey, -1), '^(%d+)|')) or 0
end
return {pending, headSeq, tailSeq, headPosted, nowMs(), token, ttl}
