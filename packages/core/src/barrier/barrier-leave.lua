-- barrier-leave: a party gives up while its generation waits; it breaks it for every party.
-- KEYS[1] barrier hash   KEYS[2] waiting parties   KEYS[3] arrival records (see _barrier.lua)
-- ARGV[1] party id   ARGV[2] channel   ARGV[3] the reason
-- Returns {2, generation, reason, by} broken (by this party, or earlier by another),
--         {1, generation} it tripped first, {3} no arrival of this party is known,
--         {-3} a key holds data this script did not write.
local partyId, channel = ARGV[1], ARGV[2]

-- @include barrier

begin()
local E, G = arrival()
if not E then return {3} end
local outcome = settled(E, G)
if outcome then return outcome end
advance(ARGV[3], partyId)
return {2, G, ARGV[3], partyId}
