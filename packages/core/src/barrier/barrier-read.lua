-- barrier-read: the barrier now, its lost parties purged first.
-- KEYS[1] barrier hash   KEYS[2] waiting parties   KEYS[3] arrival records (see _barrier.lua)
-- ARGV[1] channel
-- Returns {count, generation, waiting}, {-1, 0, 0} for a barrier never used,
--         {-3} a key holds data this script did not write.
local partyId, channel = '', ARGV[1]

-- @include barrier

begin()
if not p then return {-1, 0, 0} end
return {p, g, #redis.call('ZRANGEBYSCORE', partiesKey, '-inf', '(inf')}
