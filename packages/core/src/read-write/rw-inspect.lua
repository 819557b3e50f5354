-- rw-inspect: one side of a read-write lock, without changing it.
-- KEYS[1] lock hash
-- ARGV[1] 'r' for the readers, 'w' for the writer
-- Returns {pttl, token}: pttl -2 when no holder of that side is live, else the
--         longest lease left among them; token the greatest of their tokens;
--         token -1 when the key holds data these scripts did not write (busy).
local lockKey, kind = KEYS[1], ARGV[1]

-- @include rwstate

local holders = loadHolders(false)
if not holders then return {redis.call('PTTL', lockKey), -1} end
local pttl, token = -2, 0
for _, h in pairs(holders) do
  if h.kind == kind then
    pttl = math.max(pttl, h.expiresAt - nowMs())
    token = math.max(token, h.token)
  end
end
return {pttl, token}
