-- barrier-parties: store a new party count (tripping the generation if that many wait).
-- KEYS[1] barrier hash   KEYS[2] waiting parties   KEYS[3] arrival records (see _barrier.lua)
-- ARGV[1] channel   ARGV[2] the new count   ARGV[3] ttl ms of the keys after this call
-- Returns {previous count}, {-1} for a barrier never used,
--         {-3} a key holds data this script did not write.
local partyId, channel = '', ARGV[1]

-- @include barrier

begin(tonumber(ARGV[3]) or 0)
local n = tonumber(ARGV[2])
keep(hashKey)
if not p then
  redis.call('DEL', partiesKey)
  redis.call('HSET', hashKey, 'p', n, 'e', 0, 'g', 0)
  keep(hashKey)
  return {-1}
end
redis.call('HSET', hashKey, 'p', n)
keep(partiesKey)
keep(recordsKey)
-- As many parties as the new count are waiting already: they are through.
if atLeast(1) and atLeast(n) then advance(nil, nil) end
return {p}
