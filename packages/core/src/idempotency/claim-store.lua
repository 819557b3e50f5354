-- claim-store: store the result of an owner's claim, and wake every waiter.
-- KEYS[1] the record (see _record.lua)
-- ARGV[1] owner id   ARGV[2] channel   ARGV[3] how long the result is kept, ms
-- ARGV[4] the value   ARGV[5] 'd' (a value) or 'e' (a flight's error)
-- Returns 1 stored (or a resend of this owner's store), 0 the claim is gone, -1 another
--         owner's, -3 the key holds data these scripts did not write (never modified).
--
-- Why: one HSET of the state and the value, its PEXPIRE, then the wake-up: stopped between, the
-- result is kept the claim's lease at least, and waiters read it then.
local recordKey, FOREIGN = KEYS[1], -3
local owner, channel = ARGV[1], ARGV[2]

-- @include publish
-- @include record

if not exists then return 0 end
if holder ~= owner then return -1 end
if state ~= 'r' then return 1 end
redis.call('HSET', recordKey, 's', ARGV[5], 'v', ARGV[4])
redis.call('PEXPIRE', recordKey, tonumber(ARGV[3]))
publish('d')
return 1
