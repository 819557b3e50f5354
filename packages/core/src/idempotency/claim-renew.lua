-- claim-renew: keep an owner's running claim for at least its lease from now (never shortening it).
-- KEYS[1] the record (see _record.lua)
-- ARGV[1] owner id   ARGV[2] lease ms
-- Returns 1 this owner's claim (a claim whose result is stored ends there: nothing to extend),
--         0 gone, -1 another owner's, -3 the key holds data these scripts did not write.
local recordKey, FOREIGN = KEYS[1], -3
local owner, leaseMs = ARGV[1], tonumber(ARGV[2])

-- @include record

if not exists then return 0 end
if holder ~= owner then return -1 end
if state == 'r' and redis.call('PTTL', recordKey) < leaseMs then redis.call('PEXPIRE', recordKey, leaseMs) end
return 1
