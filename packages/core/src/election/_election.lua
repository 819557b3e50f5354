-- Election fragment, inlined where an election script says `-- @include election`.
-- An election's term is a lock hash (the lockstate fragment's layout) with two
-- more fields, written only once the term is confirmed (granted outright, or a
-- hand-off confirmed by its candidate), so a candidate that died with an
-- unconfirmed claim is never shown as leader:
--   '=' -> the leader's published value
--   '#' -> the term's revision: 1 when elected, one more at each proclaim
-- (epoch, revision) orders every change of an election: an observer drops a
-- message whose position its last read already covers (see election/observe.ts).
-- Expects `news` (ARGV: the observers' channel, in the election's hash slot).
-- announce(epoch, revision, value, ms) tells observers the leader changed, with
-- the change itself: 'l|<epoch>|<revision>|<ms>|<value>' when the term's leader
-- now publishes value (elected, proclaimed) and the term has ms left,
-- 'x|<epoch>|<revision>' when the term ended (resigned, a grant undone), value
-- nil. Sharded where the server has it, as the publish fragment does for
-- candidates.
local function announce(epoch, revision, value, ms)
  local message = 'x|' .. epoch .. '|' .. revision
  if value then message = 'l|' .. epoch .. '|' .. revision .. '|' .. ms .. '|' .. value end
  if redis.REDIS_VERSION_NUM then
    local reply = redis.pcall('SPUBLISH', news, message)
    if type(reply) ~= 'table' or not reply.err then return end
  end
  redis.call('PUBLISH', news, message)
end
-- candidatesForeign() is true when the candidate queue or table (queueKey,
-- waitersKey, where the including script has them) holds a value of another
-- type: data these scripts did not write, never modified. Read before a
-- script's first write, so that it leaves everything as it was; any other
-- error of the reads (a command the ACL refuses) is raised as it is.
local function candidatesForeign()
  for _, reply in ipairs({ redis.pcall('LINDEX', queueKey, 0), redis.pcall('HEXISTS', waitersKey, '') }) do
    if type(reply) == 'table' and reply.err then
      if string.find(reply.err, 'WRONGTYPE', 1, true) then return true end
      return error(reply)
    end
  end
  return false
end
