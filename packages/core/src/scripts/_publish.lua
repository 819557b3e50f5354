-- Fragment `publish` (shared): announce on the lock's channel.
-- Expects: channel (ARGV: the lock's pub/sub channel).
-- Defines: publish(message).
--
-- Why: sharded (SPUBLISH, in the lock's own slot) where the server has it, classic PUBLISH
-- where it does not (before Redis 7, or renamed away); clients fall back the same way. A client
-- without sharded pub/sub (a standalone Valkey GLIDE client) listens with classic SUBSCRIBE on a
-- server that has SPUBLISH: the message goes by PUBLISH too when this server has classic
-- subscribers of the channel (PUBSUB NUMSUB; refused by an ACL, skipped).
local function publishClassic(message)
  local subscribed = redis.pcall('PUBSUB', 'NUMSUB', channel)
  if type(subscribed) == 'table' and not subscribed.err and tonumber(subscribed[2]) > 0 then redis.call('PUBLISH', channel, message) end
end
local function publish(message)
  if redis.REDIS_VERSION_NUM then
    local reply = redis.pcall('SPUBLISH', channel, message)
    if type(reply) ~= 'table' or not reply.err then return publishClassic(message) end
  end
  redis.call('PUBLISH', channel, message)
end
