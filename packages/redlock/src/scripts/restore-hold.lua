-- restore-hold: put a hold back on an instance that lost it (restarted without persistence,
-- flushed) while a majority still holds it for this owner, and lift that instance's fencing
-- counter to the hold's token.
-- KEYS[1] lock hash (core's layout, _lock-state.lua)
-- KEYS[2] fence counter (core's per-hash-slot counter, same hash slot)
-- ARGV[1] owner id   ARGV[2] hold count (positive integer)   ARGV[3] token (positive integer)
-- ARGV[4] lease ms
-- Returns {status, counter}: status 1 when the hold was re-created, 0 when this owner holds
--         the lock there already (left as it is), -2 when another owner, or data these scripts
--         did not write, is at the key (left alone); counter: the fencing counter after the
--         call (>= token in every case).
--
-- Why: the lock is written only where its key is absent, never over another owner's or foreign
-- data. The counter is raised even when the lock is not ours (raising never hurts), so no later
-- grant there can draw a token at or below the hold's.
local lockKey, fenceKey = KEYS[1], KEYS[2]
local owner, count, token, leaseMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])

-- @include lockstate
-- @include raisecounter

local counter = raiseCounter(fenceKey, token)
local held, heldToken, _, foreign = readLock(owner)
if foreign or (heldToken and not held) then return {-2, counter} end
if held then return {0, counter} end
-- '@' alone carries the token: no request of this owner is to be recognised here.
redis.call('HSET', lockKey, owner, count, '@', token)
redis.call('PEXPIRE', lockKey, leaseMs)
return {1, counter}
