-- Fragment `reneweach` (shared): the loop of a renew script (the watchdog's tick).
-- Expects: KEYS, `width` of them per hold, in the order of ARGV[2]'s owner ids (separated by
--   single spaces).
-- Defines: renewEach(script, width, renewOne): renewOne(owner, i) for each hold i, its result
--   (1 renewed, -1 gone, -2 held by another owner or by data these scripts did not write) in a
--   list, one entry per hold; an error reply when KEYS and the owner ids differ in number.
local function renewEach(script, width, renewOne)
  local result = {}
  local i = 0
  for owner in string.gmatch(ARGV[2], '[^ ]+') do
    i = i + 1
    if not KEYS[width * i] then break end
    result[i] = renewOne(owner, i)
  end
  if width * i ~= #KEYS then
    return redis.error_reply('ERR ' .. script .. ': ' .. #KEYS .. ' keys but ' .. i .. ' owner ids')
  end
  return result
end
