-- inspect: the lock's state without changing it.
-- KEYS[1] lock hash
-- ARGV    none
-- Returns {pttl, token}: pttl -2 when the lock is free; token 0 when unknown.
local lockKey = KEYS[1]
local pttl = redis.call('PTTL', lockKey)
local token = tonumber(redis.call('HGET', lockKey, '@t')) or 0
return {pttl, token}
