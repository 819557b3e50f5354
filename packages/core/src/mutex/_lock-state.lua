-- The mutex's fragment, inlined where its scripts (and multi-lock's and Redlock's, which work on
-- mutex locks) say `-- @include lockstate`. A mutex lock is one of two layouts at its key:
-- * the string take.lua writes for a free lock's first hold (_taken-lock.lua):
--   one hold, nobody queued since it was taken. Whatever needs more (a second
--   hold, a waiter, a token raised) turns it into the hash first (hashLock),
--   so a string lock still there at its release has nobody to hand on to:
--   release-all.lua (Redlock's release-taken.lua) frees it without reading the queue key;
-- * the hash (scripts/_lock-hash.lua).
-- Expects `lockKey` to exist in the including script.
-- readLock(owner[, fields]) returns readHash's four values for either layout, and the lock's
-- string when it is one (nil for the hash). `fields`: the lock's HGETALL (or its pcall error)
-- when the script already read it.
-- @include takenlock
-- @include lockhash

local function readLock(owner, fields)
  fields = fields or redis.pcall('HGETALL', lockKey)
  if not fields.err then return readHash(owner, fields) end
  local value = redis.pcall('GET', lockKey)
  local holder, request, token
  if type(value) == 'string' then holder, request, token = parseTaken(value) end
  if not holder then return nil, nil, nil, true end
  return holder == owner and '1' or nil, token, request, false, value
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
