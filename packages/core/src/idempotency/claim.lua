-- claim: claim an idempotency key or a flight for an owner, or report who has it or what it holds.
-- KEYS[1] the record (see _record.lua)   KEYS[2] fence counter (one per hash slot, shared with locks)
-- ARGV[1] owner id (one per call)   ARGV[2] the claim's lease ms   ARGV[3] the fingerprint
-- ARGV[4] 'i' (an idempotency key: a stored result is replayed), 'n' (a new flight: a stored
--         result is replaced), 'j' (a caller that joined a flight: a stored result is its answer)
-- Returns {1, token} this owner holds the claim (new, or a resend),
--         {0, token, pttl} another owner's claim runs (pttl: its ms left),
--         {2, token, status, value} a stored result,
--         {-2} a different fingerprint (nothing changed),
--         {-3} the key holds data these scripts did not write (never modified).
--
-- Why: a new claim runs INCR first, and PEXPIRE of the record before the HSET (a no-op on a
-- missing key) and after it: stopped at any refused command, there is no record, or a whole
-- one with its TTL.
local recordKey, fenceKey, FOREIGN = KEYS[1], KEYS[2], {-3}
local owner, leaseMs, given, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

-- @include record

if exists then
  if mode == 'i' and fingerprint ~= given then return {-2} end
  if state == 'r' then
    if holder ~= owner then return {0, tonumber(token), redis.call('PTTL', recordKey)} end
    -- A resend of this owner's claim: the same claim, kept at least its lease.
    if redis.call('PTTL', recordKey) < leaseMs then redis.call('PEXPIRE', recordKey, leaseMs) end
    return {1, tonumber(token)}
  end
  if mode ~= 'n' or holder == owner then
    return {2, tonumber(token), state, redis.call('HGET', recordKey, 'v')}
  end
end
redis.call('PEXPIRE', recordKey, leaseMs)
local next = redis.call('INCR', fenceKey)
redis.call('HSET', recordKey, 'i', '1', 's', 'r', 't', next, 'o', owner, 'f', given, 'v', '')
redis.call('PEXPIRE', recordKey, leaseMs)
return {1, next}
