-- rw-inspect: one side of a read-write lock, changing nothing.
-- KEYS[1] lock hash   KEYS[2] lease ends (sorted set, _rw-state.lua)
-- ARGV[1] 'r' for the readers, 'w' for the writer
-- Returns {pttl, token}: pttl -2 when no holder of that side is live, else the longest lease
--         left among them; token the greatest of their tokens; token -1 when the key holds
--         data these scripts did not write (busy).
--
-- Why: reads the writer, the last lease ends and the greatest reader tokens, never every
-- holder. A hash of the previous layout (no sorted set) is read whole, as that layout was.
local lockKey, expiryKey, kind = KEYS[1], KEYS[2], ARGV[1]

-- @include now
-- @include wrongtype

local function foreign()
  return {redis.call('PTTL', lockKey), -1}
end

local writer = redis.pcall('HGET', lockKey, '!')
if isWrongType(writer, 'HGET', lockKey, '!') then return foreign() end
local probe = redis.pcall('ZRANGE', expiryKey, -1, -1, 'WITHSCORES')
if isWrongType(probe, 'ZRANGE', expiryKey, -1, -1, 'WITHSCORES') then return foreign() end

if #probe == 0 and redis.call('EXISTS', lockKey) == 1 then
  -- The previous layout: each entry kind|count|expiresAt|token|requestId|claim.
  local fields = redis.call('HGETALL', lockKey)
  local pttl, token = -2, 0
  for i = 1, #fields, 2 do
    local k, _, expiresAt, t = string.match(fields[i + 1], '^([rw])|(%d+)|(%d+)|(%d+)|[^|]*|[01]$')
    -- ('!': the writer's name, left by a conversion stopped part-way.)
    if not k and fields[i] ~= '!' then return foreign() end
    if k == kind and tonumber(expiresAt) > nowMs() then
      pttl = math.max(pttl, tonumber(expiresAt) - nowMs())
      token = math.max(token, tonumber(t))
    end
  end
  return {pttl, token}
end

local function entryToken(owner)
  local value = redis.call('HGET', lockKey, owner)
  return value and tonumber(string.match(value, '^[rw]|%d+|(%d+)|[^|]*|[01]$')
    or string.match(value, '^[rw]|%d+|%d+|(%d+)|[^|]*|[01]$'))
end

if kind == 'w' then
  if not writer then return {-2, 0} end
  local score = tonumber(redis.call('ZSCORE', expiryKey, writer))
  if not score or score <= nowMs() then return {-2, 0} end
  return {score - nowMs(), entryToken(writer) or 0}
end

-- Readers: the longest lease is the greatest score but the writer's.
local last = redis.call('ZRANGE', expiryKey, -2, -1, 'WITHSCORES')
local pttl = -2
for i = #last - 1, 1, -2 do
  local score = tonumber(last[i + 1])
  if last[i] ~= writer and score > nowMs() then
    pttl = score - nowMs()
    break
  end
end
if pttl == -2 then return {-2, 0} end
-- The greatest token of a reader whose lease runs: the smallest score, past
-- readers whose lease ended but were not dropped yet.
local offset = 0
while true do
  local page = redis.call('ZRANGEBYSCORE', expiryKey, '-inf', 0, 'WITHSCORES', 'LIMIT', offset, 100)
  if #page == 0 then return {pttl, 0} end
  for i = 1, #page, 2 do
    local reader = string.sub(page[i], 2)
    local score = tonumber(redis.call('ZSCORE', expiryKey, reader))
    if score and score > nowMs() then return {pttl, -tonumber(page[i + 1])} end
  end
  offset = offset + #page / 2
end
