-- Ladder release of rungs 1-4 (bench only, never shipped): frees the key
-- when it still holds the value the holder wrote (the floor's release).
-- KEYS[1] lock key
-- ARGV[1] the value the acquire wrote
-- Returns 1 when freed, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
