-- inbox post: appends one message to a key's queue, and makes the poster the key's processor
-- when nobody processes it.
-- KEYS[1] queue (list of `<seq>|<posted ms>|<message>`, oldest first)   KEYS[2] lease (string
--         `i1|<token>|<owner>`, with its expiry)   KEYS[3] the slot's index of the inbox's keys
--         (sorted set: key -> when its lease ends, 0 when nobody processes it)   KEYS[4] fence counter
-- KEYS[5] the key's counts (hash: 'n' -> messages pending, seq -> handler calls begun)
-- ARGV[1] message (serialized)   ARGV[2] maxPending   ARGV[3] owner of a new lease ('' : never claim)
-- ARGV[4] lease ms   ARGV[5] the key (index member)
-- Returns {position, seq, token}: position 1 is the head; token 0 when the key was not claimed
--           (someone processes it, or no owner was given),
--         {-5, pending} when the queue holds maxPending messages already (nothing stored),
--         {-3} when a key holds data these scripts did not write (nothing modified).
--
-- Why: the message and the lease are written by one script, so a post to an idle key either
-- stores the message and names its processor, or stores nothing; a post to a busy key only
-- appends (the processor's next call finds it). The message's sequence number comes from the
-- slot's fence counter, which never goes back: a removal names the last sequence it handled.
-- The count of pending messages is kept beside the queue (the commands of the README's ACL
-- include no LLEN).
-- @include now
-- @include wrongtype
local queueKey, leaseKey, indexKey, fenceKey, countsKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local message, maxPending, owner, leaseMs, member = ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), ARGV[5]

local head = redis.pcall('LINDEX', queueKey, 0)
if isWrongType(head, 'LINDEX', queueKey, 0) then return {-3} end
local pending = redis.pcall('HGET', countsKey, 'n')
if isWrongType(pending, 'HGET', countsKey, 'n') then return {-3} end
pending = tonumber(pending or '0')
local lease = redis.pcall('GET', leaseKey)
if isWrongType(lease, 'GET', leaseKey) then return {-3} end
if lease and not string.match(lease, '^i1|%d+|.+$') then return {-3} end
local indexed = redis.pcall('ZSCORE', indexKey, member)
if isWrongType(indexed, 'ZSCORE', indexKey) then return {-3} end
if pending >= maxPending then return {-5, pending} end

local seq = redis.call('INCR', fenceKey)
local now = nowMs()
redis.call('RPUSH', queueKey, seq .. '|' .. now .. '|' .. message)
redis.call('HINCRBY', countsKey, 'n', 1)
local token, score = 0, 0
if lease then
  local pttl = redis.call('PTTL', leaseKey)
  score = pttl > 0 and now + pttl or now
elseif owner ~= '' then
  token = redis.call('INCR', fenceKey)
  redis.call('SET', leaseKey, 'i1|' .. token .. '|' .. owner, 'PX', leaseMs)
  score = now + leaseMs
end
redis.call('ZADD', indexKey, score, member)
return {pending + 1, seq, token}
