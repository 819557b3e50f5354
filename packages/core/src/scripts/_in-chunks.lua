-- Fragment `inchunks` (shared: read-write lock, semaphore): one command over many arguments.
-- Expects: nothing.
-- Defines: callInChunks(command, key, args): `command key ...args` in calls of at most 1000
--   arguments (Lua's stack limits how many one call may take).
local function callInChunks(command, key, args)
  for first = 1, #args, 1000 do
    redis.call(command, key, unpack(args, first, math.min(first + 999, #args)))
  end
end
