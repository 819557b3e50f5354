-- election-proclaim: change the value a leader publishes.
-- KEYS[1] term hash
-- ARGV[1] owner id   ARGV[2] value   ARGV[3] observers' channel
-- Returns {1} when set, {-1} when no term is held, {-2} when another owner (or an
--         unconfirmed hand-off) holds it, {-3} for data these scripts did not write.
local lockKey, owner, value, news = KEYS[1], ARGV[1], ARGV[2], ARGV[3]

-- @include lockhash
-- @include election

local count, heldToken, _, foreign = readHash(owner)
if foreign then return {-3} end
-- Unconfirmed (a hand-off not taken up yet): not leading.
local published = count and redis.call('HMGET', lockKey, '=', '#')
if not published or not published[1] then
  if heldToken then return {-2} end
  return {-1}
end
local revision = (tonumber(published[2]) or 0) + 1
redis.call('HSET', lockKey, '=', value, '#', revision)
announce(heldToken, revision, value, redis.call('PTTL', lockKey))
return {1}
