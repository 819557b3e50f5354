-- Election fragment, inlined where an election script says `-- @include election`.
-- An election's term is a lock hash (the lockstate fragment's layout) with one
-- more field: '=' -> the leader's published value, written only once the term
-- is confirmed (granted outright, or a hand-off confirmed by its candidate), so
-- a candidate that died with an unconfirmed claim is never shown as leader.
-- Expects `news` (ARGV: the observers' channel, in the election's hash slot).
-- announce() tells observers the leader changed (elected, proclaimed, resigned,
-- a grant undone): they read the state again. Sharded where the server has it,
-- as the publish fragment does for candidates.
local function announce()
  if redis.REDIS_VERSION_NUM then
    local reply = redis.pcall('SPUBLISH', news, 'n')
    if type(reply) ~= 'table' or not reply.err then return end
  end
  redis.call('PUBLISH', news, 'n')
end
