-- semaphore-extend: set the remaining lease of one holder.
-- KEYS[1] semaphore hash   KEYS[2] holder expiry zset
-- ARGV[1] owner id         ARGV[2] lease ms
-- Returns {1} when extended, {-1} when the owner holds nothing (its lease ran out by server
--         time, or the semaphore was removed), {-3} when a key holds data these scripts did
--         not write (never modified).
local semKey, expiryKey = KEYS[1], KEYS[2]
local owner, leaseMs = ARGV[1], tonumber(ARGV[2])
-- pcall: a key of another type is foreign data (-3); any other error is raised again.
local function foreign(reply, command, key)
  if type(reply) ~= 'table' or not reply.err then return false end
  if string.find(reply.err, 'WRONGTYPE', 1, true) then return true end
  redis.call(command, key, owner)
  return error(reply)
end
local held = redis.pcall('HEXISTS', semKey, owner)
if foreign(held, 'HEXISTS', semKey) then return {-3} end
local score = redis.pcall('ZSCORE', expiryKey, owner)
if foreign(score, 'ZSCORE', expiryKey) then return {-3} end
if held == 0 or not score then return {-1} end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(score) <= now then return {-1} end
redis.call('ZADD', expiryKey, now + leaseMs, owner)
return {1}
