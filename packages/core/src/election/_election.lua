-- Fragment `election` (an election's own): tells observers the leader changed.
-- Expects: `news` (ARGV: the observers' channel, in the election's hash slot).
-- Defines: announce(epoch, revision, value, ms): publishes 'l|<epoch>|<revision>|<ms>|<value>'
--   when the term's leader now publishes value (elected, proclaimed) with ms left, or
--   'x|<epoch>|<revision>' when the term ended (resigned, a grant undone; value nil);
--   through the publish fragment (sharded where the server has it; a refused publish ignored).
--
-- Why: a term is a lock hash (_lock-state.lua) with two more fields, '=' -> the leader's value
-- and '#' -> the revision (1 when elected, +1 per proclaim), written only once the term is
-- confirmed, so a candidate that died with an unconfirmed claim is never shown as leader.
-- (epoch, revision) orders every change: an observer drops a message its last read already
-- covers (election/observe.ts).
-- @include publish

local function announce(epoch, revision, value, ms)
  local message = 'x|' .. epoch .. '|' .. revision
  if value then message = 'l|' .. epoch .. '|' .. revision .. '|' .. ms .. '|' .. value end
  publishOn(news, message)
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
