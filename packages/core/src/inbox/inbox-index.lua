-- inbox index: lists the keys of an inbox recorded in one or more slots' indexes.
-- KEYS[1..n] indexes (one per slot: all of them in one call on a standalone server, one per
--            call on a Cluster)
-- ARGV[1] 'due' for the keys whose lease ended (score up to the server's time), 'all' for every key
-- ARGV[2] most keys to list per index
-- Returns {key, ...}; {-3} when an index holds data these scripts did not write.
--
-- Why: a script, so the server's clock decides which leases ended (no clock of a client's),
-- and a standalone server reads every slot's index in one round trip.
-- @include now
-- @include wrongtype
local which, most = ARGV[1], tonumber(ARGV[2])
local max = which == 'due' and nowMs() or '+inf'
local found = {}
for _, indexKey in ipairs(KEYS) do
  local keys = redis.pcall('ZRANGEBYSCORE', indexKey, '-inf', max, 'LIMIT', 0, most)
  if isWrongType(keys, 'ZRANGEBYSCORE', indexKey, '-inf', max) then return {-3} end
  for _, key in ipairs(keys) do found[#found + 1] = key end
end
return found
