-- Ladder rung 1 (bench only, never shipped): the floor's SET NX PX, but sent
-- as a script. What an acquire costs the server only for being a script,
-- which every promise below needs (a check and a write in one step).
-- KEYS[1] lock key
-- ARGV[1] the holder's value (compared whole by the release)
-- Returns 'OK' when taken, nil when the key exists.
return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', '30000')
