-- inbox next: the processor's one call between handler calls. Removes the messages it handled,
-- then hands it the next ones, or releases the key when its queue is empty.
-- KEYS[1] queue   KEYS[2] lease   KEYS[3] counts (hash: 'n' -> messages pending, seq -> handler
--         calls begun)   KEYS[4] index
-- ARGV[1] owner   ARGV[2] token   ARGV[3] last handled seq (head messages up to it are removed; 0: none)
-- ARGV[4] most messages to hand (0: release the key now, leaving what is pending to the next processor)
-- ARGV[5] ttl ms (0: none)   ARGV[6] maxAttempts   ARGV[7] debounce ms (0: none)   ARGV[8] the key
-- ARGV[9] the key's pub/sub channel
-- Returns {-1} when the lease is not this processor's (nothing removed or changed),
--         {0} when the key was released (its queue is empty, or ARGV[4] was 0),
--         {2, wait ms} when the newest message is younger than the debounce (nothing handed),
--         {1, now, n, seq, posted ms, attempt, dead, message, ... (n times)}: dead is 0 for a
--           message to handle (attempt counted), 1 past its ttl, 2 when maxAttempts calls began;
--           the messages handed are either all dead or all to handle.
--
-- Why: the removal is fenced by the lease, so a processor that lost its key (frozen past its
-- lease) cannot remove a message that the next one has not handled. The release is decided
-- here, with the queue read in the same script: a post that lands before it is handed out,
-- a post after it finds the key free and claims it. No message is stranded in between.
local queueKey, leaseKey, attemptsKey, indexKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, token, lastSeq, most = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local ttlMs, maxAttempts, debounceMs, member = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local channel = ARGV[9]
-- @include now
-- @include publish

if redis.call('GET', leaseKey) ~= 'i1|' .. token .. '|' .. owner then return {-1} end

local function parse(entry)
  local seq, posted, message = string.match(entry, '^(%d+)|(%d+)|(.*)$')
  return tonumber(seq), tonumber(posted), message
end

local removed = 0
if lastSeq > 0 then
  while true do
    local head = redis.call('LINDEX', queueKey, 0)
    if not head then break end
    local seq = parse(head)
    if not seq or seq > lastSeq then break end
    redis.call('LPOP', queueKey)
    redis.call('HDEL', attemptsKey, seq)
    removed = removed + 1
  end
end

local pending = 0
if redis.call('LINDEX', queueKey, 0) then
  pending = removed > 0 and redis.call('HINCRBY', attemptsKey, 'n', -removed) or 1
end
if pending == 0 or most == 0 then
  redis.call('DEL', leaseKey)
  if pending == 0 then
    redis.call('DEL', attemptsKey)
    redis.call('ZREM', indexKey, member)
  else
    redis.call('ZADD', indexKey, 0, member)
  end
  publish('r')
  return {0}
end
if removed > 0 then publish('r') end

local now = nowMs()
if debounceMs > 0 then
  local _, newest = parse(redis.call('LINDEX', queueKey, -1))
  if newest and newest + debounceMs > now then return {2, newest + debounceMs - now} end
end

local reply = {1, now, 0}
local n, dead, live = 0, 0, 0
for i = 0, most - 1 do
  local entry = redis.call('LINDEX', queueKey, i)
  if not entry then break end
  local seq, posted, message = parse(entry)
  if not seq then break end
  local status = 0
  local attempt = tonumber(redis.call('HGET', attemptsKey, seq) or '0')
  if ttlMs > 0 and posted + ttlMs <= now then
    status = 1
  elseif attempt >= maxAttempts then
    status = 2
  end
  if (status == 0 and dead > 0) or (status ~= 0 and live > 0) then break end
  if status == 0 then
    attempt = redis.call('HINCRBY', attemptsKey, seq, 1)
    live = live + 1
  else
    dead = dead + 1
  end
  n = n + 1
  reply[#reply + 1] = seq
  reply[#reply + 1] = posted
  reply[#reply + 1] = attempt
  reply[#reply + 1] = status
  reply[#reply + 1] = message
end
reply[3] = n
return reply
