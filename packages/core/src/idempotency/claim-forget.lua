-- claim-forget: remove a stored result (a running claim stays).
-- KEYS[1] the record (see _record.lua)
-- ARGV    none
-- Returns 1 a stored result was removed, 0 none, -3 the key holds data these scripts did not
--         write (never modified).
local recordKey, FOREIGN = KEYS[1], -3

-- @include record

if not exists or state == 'r' then return 0 end
redis.call('DEL', recordKey)
return 1
