-- claim-release: remove an owner's running claim (its work failed), waking every waiter to claim it.
-- KEYS[1] the record (see _record.lua)
-- ARGV[1] owner id   ARGV[2] channel
-- Returns 1 this owner's running claim was removed, 0 it was not there, -1 another owner's,
--         -3 the key holds data these scripts did not write (never modified).
--
-- Why: the wake-up, then the DEL: stopped between, waiters read the claim still there.
local recordKey, FOREIGN = KEYS[1], -3
local owner, channel = ARGV[1], ARGV[2]

-- @include publish
-- @include record

if not exists then return 0 end
if holder ~= owner then return -1 end
if state ~= 'r' then return 0 end
publish('f')
redis.call('DEL', recordKey)
return 1
