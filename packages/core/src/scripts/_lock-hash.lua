-- Shared fragment, inlined where a script says `-- @include lockhash`: a lock's hash, the
-- layout the mutex (mutex/_lock-state.lua, which adds take.lua's string) and the election share.
-- owner -> hold count; '@' .. id of the last request applied -> fencing token; '@c' -> 1 while
-- a hand-off is unconfirmed.
-- Expects `lockKey` to exist in the including script.
-- readHash(owner[, fields]) returns owner's hold count (string, nil when owner holds none), the
-- token (string, nil when nobody holds the lock), the last request id (string, nil when nobody
-- holds the lock) and `foreign`: true when the key holds something these scripts did not write
-- (a value of another type, or a hash without a token field). Foreign data is busy to every
-- script and never modified. `fields`: the lock's HGETALL when the script already read it.
--
-- Why: the request id rides in the token's field name rather than in a field of its own: that
-- keeps a held lock's hash within 48 bytes (64 with a separate field), one allocator size class
-- less for every held lock. '@' alone carries the token when no request is to be recognised.
local function readHash(owner, fields)
  fields = fields or redis.pcall('HGETALL', lockKey)
  if fields.err then return nil, nil, nil, true end
  local count, token, lastRequest
  for i = 1, #fields, 2 do
    local field = fields[i]
    if field == owner then
      count = fields[i + 1]
    elseif string.byte(field, 1) == 64 and field ~= '@c' then
      token, lastRequest = fields[i + 1], string.sub(field, 2)
    end
  end
  return count, token, lastRequest, #fields > 0 and not token
end

-- Makes `requestId` the last request applied; the token stays.
local function setLastRequest(token, lastRequest, requestId)
  if lastRequest then redis.call('HDEL', lockKey, '@' .. lastRequest) end
  redis.call('HSET', lockKey, '@' .. requestId, token)
end
