-- Fragment `publish` (shared): announce on the lock's channel.
-- Expects: channel (ARGV: the lock's pub/sub channel).
-- Defines: publish(message) on the lock's channel; publishOn(to, message) on another channel
--   of the same slot (an election's news).
--
-- Why: sharded (SPUBLISH, in the lock's own slot) where the server has it, classic PUBLISH
-- where it does not (before Redis 7, or renamed away); clients fall back the same way. A client
-- without sharded pub/sub (a standalone Valkey GLIDE client) listens with classic SUBSCRIBE on a
-- server that has SPUBLISH: the message goes by PUBLISH too when this server has classic
-- subscribers of the channel (PUBSUB NUMSUB; refused by an ACL, skipped).
-- Every publish is a pcall: a user whose ACL refuses it (a client that waits by spinning needs no
-- pub/sub) still releases and hands off, and the refusal is logged in the server's ACL LOG; a
-- spinning waiter never needs the message (its next look finds what it says), a listening one of
-- another client does, so the scripts publish whatever this client's wait mode.
local function publishOn(to, message)
  if redis.REDIS_VERSION_NUM then
    local reply = redis.pcall('SPUBLISH', to, message)
    if type(reply) ~= 'table' or not reply.err then
      local subscribed = redis.pcall('PUBSUB', 'NUMSUB', to)
      if type(subscribed) == 'table' and not subscribed.err and tonumber(subscribed[2]) > 0 then redis.pcall('PUBLISH', to, message) end
      return
    end
  end
  redis.pcall('PUBLISH', to, message)
end
local function publish(message)
  publishOn(channel, message)
end
