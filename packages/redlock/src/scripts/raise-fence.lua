-- raise-fence: lift one instance's fencing counter to a token chosen across a quorum, and
-- stamp that token on the lock if this owner holds it there.
-- KEYS[1] fence counter (core's per-hash-slot INCR counter)
-- KEYS[2] lock (same hash slot; core's layout, _lock-state.lua: the field '@' .. last request
--         id holds the token; take.lua's string lock becomes that hash first)
-- ARGV[1] token (positive integer)   ARGV[2] owner id
-- Returns {counter, stamped}: the counter after the call (>= token), and 1 when the lock hash
--         belongs to the owner and now carries the token, else 0.
--
-- Why: a value of another type at the lock key makes HEXISTS fail: pcall, so it is left alone
-- like any lock of another owner.
local fenceKey, lockKey = KEYS[1], KEYS[2]
local token, owner = tonumber(ARGV[1]), ARGV[2]

-- @include raisecounter
-- @include lockstate

local counter = raiseCounter(fenceKey, token)
local stamped = 0
local held = redis.pcall('HEXISTS', lockKey, owner)
if type(held) == 'table' then
  -- Not a hash: this owner's string lock is stamped as the hash.
  local count, _, _, _, taken = readLock(owner)
  if count and taken and hashLock(taken) then held = 1 end
end
if held == 1 then
  local fields = redis.call('HKEYS', lockKey)
  local tokenField = '@'
  for _, field in ipairs(fields) do
    if string.byte(field, 1) == 64 and field ~= '@c' then tokenField = field end
  end
  redis.call('HSET', lockKey, tokenField, token)
  stamped = 1
end
return {counter, stamped}
