-- election-acquire: take a free term, queue as a candidate, or confirm a hand-off.
-- KEYS[1] term hash: owner -> '1', '@' .. granting request id -> epoch (fencing token),
--         '@c' -> 1 while a hand-off is unconfirmed, '=' -> the leader's value,
--         '#' -> its revision (both set once confirmed)
-- KEYS[2] candidate queue (list of request ids, FIFO)
-- KEYS[3] candidate table (hash: request id -> expiresAt|termMs|requestId|owner)
-- KEYS[4] fence counter (one INCR counter per hash slot, shared with locks)
-- ARGV[1] owner id (one per campaign)   ARGV[2] term ms   ARGV[3] request id
-- ARGV[4] mode: 'try' only tries, 'join' queues the caller when the term is held,
--         'confirm' only confirms a term handed to this request
-- ARGV[5] hand-off ms (claim length, and how long past the term a queue entry lasts)
-- ARGV[6] candidates' channel   ARGV[7] observers' channel   ARGV[8] value
-- Returns {1, epoch, 1, termMs} when the caller leads (a resend gets the same answer),
--         {0, retryAfterMs} when it must wait ('try'),
--         {0, retryAfterMs, serverMs} when it must wait and is queued ('join'),
--         {-1} / {-2} in 'confirm' mode when the term is gone / held by another owner,
--         {-3} when the term key, the candidate queue or table holds data these scripts
--           did not write (never modified).
--
-- Why: every path that writes the term hash sets its TTL last: a PEXPIRE finding its expiry
-- already past deletes the key, and nothing written after it may bring it back without one.
local lockKey, queueKey, waitersKey, fenceKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local owner, leaseMs, requestId, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local claimMs, channel, news, value = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
local graceMs = claimMs

-- @include lockhash
-- @include publish
-- @include handoff
-- @include queueentry
-- @include election

-- The caller leads from here: its value is published with the term, at revision 1,
-- and the term runs for leaseMs from now (the TTL, set once every field is written).
local function elected(token)
  redis.call('HSET', lockKey, '=', value, '#', 1)
  redis.call('PEXPIRE', lockKey, leaseMs)
  announce(token, 1, value, leaseMs)
  return {1, tonumber(token), 1, leaseMs}
end

local count, heldToken, lastRequest, foreign = readHash(owner)
if foreign then return {-3} end
if count then
  if redis.call('HDEL', lockKey, '@c') == 1 then
    -- The hand-off to this request, confirmed: from the claim to the full term.
    return elected(heldToken)
  end
  -- A resend after a lost reply: the same term, never a second one.
  if redis.call('PTTL', lockKey) < leaseMs then redis.call('PEXPIRE', lockKey, leaseMs) end
  return {1, tonumber(heldToken), 1, leaseMs}
end

if mode == 'confirm' then
  if heldToken then return {-2} end
  return {-1}
end
-- Every path below may queue the caller or hand the term on: no write before this.
if candidatesForeign() then return {-3} end

local function enqueue(retryAfterMs)
  if mode == 'join' then
    joinQueue(retryAfterMs + graceMs, leaseMs .. '|' .. requestId .. '|' .. owner)
    return {0, retryAfterMs, nowMs()}
  end
  return {0, retryAfterMs}
end

if heldToken then
  local pttl = redis.call('PTTL', lockKey)
  if pttl < 1 then pttl = graceMs end
  return enqueue(pttl)
end

-- No term.
local holder = handOnFree()
local claimed = holder == requestId and redis.call('HGET', lockKey, '@' .. requestId)
if claimed then
  -- Every entry ahead of ours had expired: the claim is ours, confirm it now.
  redis.call('HDEL', lockKey, '@c')
  return elected(claimed)
end
-- (Our claim gone as it was made, its TTL past within the command: a new term below.)
if holder and holder ~= requestId then return enqueue(claimMs) end

local token = redis.call('INCR', fenceKey)
redis.call('HSET', lockKey, owner, '1', '@' .. requestId, token, '=', value, '#', 1)
-- A new key: a PEXPIRE the ACL refuses would leave a term that never ends.
local expired = redis.pcall('PEXPIRE', lockKey, leaseMs)
if type(expired) == 'table' then
  redis.call('DEL', lockKey)
  return expired
end
announce(token, 1, value, leaseMs)
return {1, token, 1, leaseMs}
