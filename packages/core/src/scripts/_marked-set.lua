-- Fragment `markedset` (shared: latch, barrier): sorted sets holdfast marks as its own.
-- Expects: nothing.
-- Defines: MARK, isForeign(reply), foreignSet(key).
--
-- Why: every ZADD that can create the set adds MARK ('#') scored +inf, so a sorted set without
-- it was not written by holdfast, and is never modified or deleted. Every other member has a
-- finite score: the mark is last by rank and in no range that ends at a finite score.
local MARK = '#'

-- True for the error reply of a pcall that met a key of another type; any other error
-- (a missing ACL permission) is raised as it is.
local function isForeign(reply)
  if type(reply) ~= 'table' or not reply.err then return false end
  if string.find(reply.err, 'WRONGTYPE', 1, true) then return true end
  error(reply)
end

-- True when `key` holds data holdfast did not write: a value of another type, or a sorted set
-- without the mark.
local function foreignSet(key)
  local mark = redis.pcall('ZSCORE', key, MARK)
  if isForeign(mark) then return true end
  return not mark and redis.call('EXISTS', key) == 1
end
