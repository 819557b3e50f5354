-- The mutex's fragment, inlined where a script says `-- @include takenlock`.
-- A lock take.lua granted (a free lock nobody queued for, its first hold) is a
-- string, not the hash of _lock-state.lua: owner .. '@' .. request id .. '|' ..
-- token, with the lease as its TTL. One SET … PX writes it where the hash
-- needs HSET and PEXPIRE (Redis 7.0 cannot give a hash its TTL in the write),
-- and its release compares one GET where the hash's reads an array. Neither
-- an owner id (base64url, Redlock's with a ':') nor a request id (base64url)
-- holds '@' or '|'.
-- parseTaken(value) returns owner, request id and token (strings) when value
-- has that layout, nil otherwise.
local function parseTaken(value)
  return string.match(value, '^([^@|]+)@([^@|]*)|(%d+)$')
end

-- True when the string lock at `key` is owner's (a key of another type or no
-- key: false). For the scripts that only extend a lock, which work on either
-- layout through its TTL.
local function takenBy(key, owner)
  local value = redis.pcall('GET', key)
  return type(value) == 'string' and string.find(value, owner .. '@', 1, true) == 1
end
