-- claim: every operation of an idempotency key or a flight ('claim', 'renew', 'store',
-- 'release', 'read', 'forget').
-- KEYS[1] the record (hash, written only here): 'i' -> '1' (the mark: a hash without it is
--         not ours), 's' -> 'r' running | 'd' done | 'e' failed (a flight's error),
--         't' -> the claim's fencing token, 'o' -> its owner id,
--         'f' -> the fingerprint ('' for none), 'v' -> the stored value ('' while running)
-- KEYS[2] fence counter (one per hash slot, shared with locks)
-- ARGV[1] operation
-- ARGV[2] owner id (one per call; '' for 'read' and 'forget')   ARGV[3] channel
-- ARGV[4] 'claim', 'renew': the claim's lease ms; 'store': how long the result is kept, ms
-- ARGV[5] 'claim': the fingerprint; 'store': the value
-- ARGV[6] 'claim': 'i' (an idempotency key: a stored result is replayed), 'n' (a new flight:
--         a stored result is replaced), 'j' (a caller that joined a flight: a stored result
--         is its answer); 'store': 'd' (a value) or 'e' (a flight's error)
-- Returns 'claim':   {1, token} this owner holds the claim (new, or a resend),
--                    {0, token, pttl} another owner's claim runs (pttl: its ms left),
--                    {2, token, status, value} a stored result,
--                    {-2} a different fingerprint (nothing changed);
--         'renew':   1 this owner's claim (kept at least lease ms), 0 gone, -1 another's;
--         'store':   1 stored (or a resend of this owner's store), 0 the claim is gone,
--                    -1 another's;
--         'release': 1 this owner's running claim was removed, 0 it was not there;
--         'read':    {0} no record, {1, token, status, fingerprint, value, pttl};
--         'forget':  1 a stored result was removed, 0 none (a running claim stays);
--         {-3} / -3: the key holds data these scripts did not write (never modified).
--
-- Why: one script, because every operation shares the reads. Stopped at any refused command,
-- the record stays whole (reads that can find foreign data come first):
--   * a new claim: INCR first, PEXPIRE of the record before the HSET (a no-op on a missing
--     key) and after it: there is no record, or a whole one with its TTL;
--   * a store: one HSET of the state and the value, its PEXPIRE, then the wake-up: stopped
--     between, the result is kept the claim's lease at least, and waiters read it then;
--   * a release: the wake-up, then the DEL: stopped between, waiters read the claim still there.
local recordKey, fenceKey = KEYS[1], KEYS[2]
local op, owner, channel = ARGV[1], ARGV[2], ARGV[3]

-- @include publish

local fields = redis.pcall('HMGET', recordKey, 'i', 's', 't', 'o', 'f')
if type(fields) == 'table' and fields.err then
  -- Another type at the key is foreign data; any other error (an ACL refusal) fails the call.
  if not string.find(fields.err, 'WRONGTYPE', 1, true) then return error(fields) end
  if op == 'claim' or op == 'read' then return {-3} end
  return -3
end
local mark, state, token, holder, fingerprint = fields[1], fields[2], fields[3], fields[4], fields[5]
local exists = mark ~= false
if not exists then
  if redis.call('EXISTS', recordKey) == 1 then
    if op == 'claim' or op == 'read' then return {-3} end
    return -3
  end
elseif mark ~= '1' or not (state == 'r' or state == 'd' or state == 'e') or not tonumber(token) or not holder or not fingerprint then
  if op == 'claim' or op == 'read' then return {-3} end
  return -3
end

if op == 'read' then
  if not exists then return {0} end
  return {1, tonumber(token), state, fingerprint, redis.call('HGET', recordKey, 'v'), redis.call('PTTL', recordKey)}
end

if op == 'claim' then
  local leaseMs, given, mode = tonumber(ARGV[4]), ARGV[5], ARGV[6]
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
end

if op == 'forget' then
  if not exists or state == 'r' then return 0 end
  redis.call('DEL', recordKey)
  return 1
end

-- 'renew', 'store', 'release': this owner's claim only.
if not exists then return 0 end
if holder ~= owner then return -1 end
if op == 'renew' then
  -- A claim whose result is stored ends there: nothing to extend, still this owner's.
  local leaseMs = tonumber(ARGV[4])
  if state == 'r' and redis.call('PTTL', recordKey) < leaseMs then redis.call('PEXPIRE', recordKey, leaseMs) end
  return 1
end
if op == 'store' then
  if state ~= 'r' then return 1 end
  redis.call('HSET', recordKey, 's', ARGV[6], 'v', ARGV[5])
  redis.call('PEXPIRE', recordKey, tonumber(ARGV[4]))
  publish('d')
  return 1
end
-- 'release'
if state ~= 'r' then return 0 end
publish('f')
redis.call('DEL', recordKey)
return 1
