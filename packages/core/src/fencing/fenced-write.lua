-- fenced-write: store a value only if its fencing token is newer than the stored one.
-- KEYS[1] resource hash: 'token', 'value'
-- ARGV[1] token (positive integer)   ARGV[2] value
-- Returns 1 when written, 0 when rejected as stale (token <= stored token).
local key, token, value = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local stored = tonumber(redis.call('HGET', key, 'token'))
if stored and token <= stored then
  return 0
end
redis.call('HSET', key, 'token', token, 'value', value)
return 1
