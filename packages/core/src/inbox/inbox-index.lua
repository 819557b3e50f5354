-- inbox index: lists keys of one slot's index of an inbox.
-- KEYS[1] index
-- ARGV[1] 'due' for the keys whose lease ended (score up to the server's time), 'all' for every key
-- ARGV[2] most keys to list
-- Returns {key, ...}; {-3} when the index holds data these scripts did not write.
--
-- Why: a script, so the server's clock decides which leases ended (no clock of a client's).
-- @include now
-- @include wrongtype
local indexKey, which, most = KEYS[1], ARGV[1], tonumber(ARGV[2])
local max = which == 'due' and nowMs() or '+inf'
local keys = redis.pcall('ZRANGEBYSCORE', indexKey, '-inf', max, 'LIMIT', 0, most)
if isWrongType(keys, 'ZRANGEBYSCORE', indexKey, '-inf', max) then return {-3} end
return keys
