-- Fragment `publish` (shared): announce on the lock's channel.
-- Expects: channel (ARGV: the lock's pub/sub channel).
-- Defines: publish(message).
--
-- Why: sharded (SPUBLISH, in the lock's own slot) where the server has it, classic PUBLISH
-- where it does not (before Redis 7, or renamed away); clients fall back the same way.
local function publish(message)
  if redis.REDIS_VERSION_NUM then
    local reply = redis.pcall('SPUBLISH', channel, message)
    if type(reply) ~= 'table' or not reply.err then return end
  end
  redis.call('PUBLISH', channel, message)
end
