-- claim-read: the record as it is.
-- KEYS[1] the record (see _record.lua)
-- ARGV    none
-- Returns {0} no record, {1, token, status, fingerprint, value, pttl},
--         {-3} the key holds data these scripts did not write.
local recordKey, FOREIGN = KEYS[1], {-3}

-- @include record

if not exists then return {0} end
return {1, tonumber(token), state, fingerprint, redis.call('HGET', recordKey, 'v'), redis.call('PTTL', recordKey)}
