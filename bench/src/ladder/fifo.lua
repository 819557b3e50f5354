-- Ladder rungs 3 and 4 (bench only, never shipped): + the FIFO check: a free
-- lock with waiters queued is theirs, so the queue's key is read with the
-- lock's (one EXISTS of both). Rung 4 sends the request id inside ARGV[1]
-- (owner id .. '|' .. request id .. '|'), so a resent try could be told from
-- a new one by the value: the same script, a longer argument.
-- KEYS[1] lock key   KEYS[2] waiter queue   KEYS[3] fence counter
-- ARGV[1] owner id .. '|' [.. request id .. '|'] (the value is ARGV[1] .. token)
-- Returns the token, or nil when the lock is held or waiters are queued.
if redis.call('EXISTS', KEYS[1], KEYS[2]) > 0 then return false end
local token = redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[1], ARGV[1] .. token, 'PX', '30000')
return token
