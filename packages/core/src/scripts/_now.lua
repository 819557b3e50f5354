-- Fragment `now` (shared): the server time.
-- Expects: nothing.
-- Defines: nowMs(): server time in ms, read once and only when a script needs it.
local serverNowMs
local function nowMs()
  if not serverNowMs then
    local time = redis.call('TIME')
    serverNowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return serverNowMs
end
