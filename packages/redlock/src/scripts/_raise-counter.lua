-- Fragment `raisecounter` (Redlock's): lift a fencing counter.
-- Expects: nothing.
-- Defines: raiseCounter(fenceKey, token): lifts core's per-hash-slot INCR counter to at least
--   `token` and returns its value afterwards.
--
-- Why: only ever raises: core's acquire script INCRs the counter, so every later grant on this
-- instance gets a larger token than `token`.
local function raiseCounter(fenceKey, token)
  local counter = tonumber(redis.call('GET', fenceKey)) or 0
  if counter < token then
    redis.call('SET', fenceKey, token)
    counter = token
  end
  return counter
end
