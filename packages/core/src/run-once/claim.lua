-- run-once claim: claim a run-once key for one owner, for ttl ms, or report who has it.
-- KEYS[1] the claim (string `o1|<token>|<owner>`)
-- KEYS[2] fence counter (one per hash slot, shared with locks)
-- ARGV[1] owner id (one per claim attempt)   ARGV[2] ttl ms
-- Returns {1, token} when this owner holds the claim: claimed now, or a resend of a claim it
--           made (same token, never a second claim; its ttl kept at least ttl ms),
--         {0} when another owner holds it,
--         {-3} when the key holds data these scripts did not write (never modified).
--
-- Why: the claim is one string written with its expiry by one command (SET PX), so a call
-- stopped anywhere leaves no claim or a whole one.
local claimKey, fenceKey = KEYS[1], KEYS[2]
local owner, ttlMs = ARGV[1], tonumber(ARGV[2])

local value = redis.pcall('GET', claimKey)
if type(value) == 'table' and value.err then
  -- Another type at the key is foreign data; any other error (an ACL refusal) fails the call.
  if not string.find(value.err, 'WRONGTYPE', 1, true) then return error(value) end
  return {-3}
end
if value then
  local token, holder = string.match(value, '^o1|(%d+)|(.+)$')
  if not token then return {-3} end
  if holder ~= owner then return {0} end
  if redis.call('PTTL', claimKey) < ttlMs then redis.call('PEXPIRE', claimKey, ttlMs) end
  return {1, tonumber(token)}
end
-- The counter first: a refused INCR leaves nothing, a refused SET only a token skipped.
local token = redis.call('INCR', fenceKey)
redis.call('SET', claimKey, 'o1|' .. token .. '|' .. owner, 'PX', ttlMs)
return {1, token}
