-- Shared fragment, inlined where a script says `-- @include lockstate`.
-- A lock is one of two layouts at its key:
-- * the string take.lua writes for a free lock's first hold (_taken-lock.lua):
--   one hold, nobody queued since it was taken. Whatever needs more (a second
--   hold, a waiter, a token raised) turns it into the hash first (hashLock),
--   so a string lock still there at its release has nobody to hand on to:
--   release-all.lua (Redlock's release-taken.lua) frees it without reading the queue key;
-- * the hash: owner -> hold count; '@' .. id of the last request applied ->
--   fencing token; '@c' -> 1 while a hand-off is unconfirmed. The request id
--   rides in the token's field name rather than in a field of its own: that
--   keeps a held lock's hash within 48 bytes (64 with a separate field), one
--   allocator size class less for every held lock. '@' alone carries the
--   token when no request is to be recognised any more.
-- Expects `lockKey` to exist in the including script.
-- readLock(owner[, fields]) returns owner's hold count (string, nil when
-- owner holds none), the token (string, nil when nobody holds the lock), the
-- last request id (string, nil when nobody holds the lock), `foreign`: true
-- when the key holds something these scripts did not write (a value of
-- another type, a string of another layout, or a hash without a token field),
-- and the lock's string when it is one (nil for the hash). Foreign data is
-- busy to every script and never modified. `fields`: the lock's HGETALL (or
-- its pcall error) when the script already read it.
-- @include takenlock

local function readLock(owner, fields)
  fields = fields or redis.pcall('HGETALL', lockKey)
  if fields.err then
    local value = redis.pcall('GET', lockKey)
    local holder, request, token
    if type(value) == 'string' then holder, request, token = parseTaken(value) end
    if not holder then return nil, nil, nil, true end
    return holder == owner and '1' or nil, token, request, false, value
  end
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

-- Turns the string lock `value` (readLock's fifth value) into the hash, with
-- the same hold, token, last request and TTL, and returns true. A string
-- without a TTL is left as it is, and false returned: these scripts never
-- write one (the callers treat it as data they did not write, or as busy, as
-- a hash without a TTL). The ACL may refuse the hash's commands where it
-- allowed take.lua's SET: then the string goes back as it was before the
-- server's error is raised.
local function hashLock(value)
  local pttl = redis.call('PTTL', lockKey)
  if pttl < 1 then return false end
  local holder, request, token = parseTaken(value)
  redis.call('DEL', lockKey)
  local ok, failure = pcall(function()
    redis.call('HSET', lockKey, holder, '1', '@' .. request, token)
    redis.call('PEXPIRE', lockKey, pttl)
  end)
  if not ok then
    redis.call('DEL', lockKey)
    redis.call('SET', lockKey, value, 'PX', pttl)
    return error(failure)
  end
  return true
end
