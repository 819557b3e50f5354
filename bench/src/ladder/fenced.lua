-- Ladder rung 2 (bench only, never shipped): + a fencing token. The token
-- comes from the slot's counter (INCR) and is kept in the lock's value, so
-- the counter's key, and a check before the INCR (a busy try must not use
-- up a token), come with it.
-- KEYS[1] lock key   KEYS[2] fence counter
-- ARGV[1] owner id .. '|' (the value is ARGV[1] .. token)
-- Returns the token, or nil when the lock is held.
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. token, 'PX', '30000')
return token
