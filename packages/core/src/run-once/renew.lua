-- run-once renew: keep a claim alive while its function runs (never shortens it); with ttl 0,
-- drop it (a claim that will not be used: too few replicas).
-- KEYS[1] the claim (string)
-- ARGV[1] owner id   ARGV[2] ttl ms, or 0 to drop
-- Returns 1 when this owner holds the claim (its ttl is now at least ttl ms, or it was dropped),
--         0 when the claim is gone (expired or deleted),
--         -1 when another owner holds it,
--         -3 when the key holds data these scripts did not write (never modified).
local claimKey = KEYS[1]
local owner, ttlMs = ARGV[1], tonumber(ARGV[2])

local value = redis.pcall('GET', claimKey)
if type(value) == 'table' and value.err then
  if not string.find(value.err, 'WRONGTYPE', 1, true) then return error(value) end
  return -3
end
if not value then return 0 end
local token, holder = string.match(value, '^o1|(%d+)|(.+)$')
if not token then return -3 end
if holder ~= owner then return -1 end
if ttlMs == 0 then
  redis.call('DEL', claimKey)
elseif redis.call('PTTL', claimKey) < ttlMs then
  redis.call('PEXPIRE', claimKey, ttlMs)
end
return 1
