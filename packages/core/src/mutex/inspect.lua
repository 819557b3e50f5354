-- inspect: the lock's state, changing nothing.
-- KEYS[1] lock hash
-- ARGV    none
-- Returns {pttl, token}: pttl -2 when the lock is free; token 0 when unknown,
--         -1 when the key holds data these scripts did not write (busy).
local lockKey = KEYS[1]

-- @include lockstate

local pttl = redis.call('PTTL', lockKey)
local _, heldToken, _, foreign = readLock(nil)
local token = tonumber(heldToken) or 0
if foreign then token = -1 end
return {pttl, token}
