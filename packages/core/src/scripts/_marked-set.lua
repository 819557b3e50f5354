-- Shared fragment, inlined where a script says `-- @include markedset`.
-- The sorted sets of a latch and of a barrier each hold the member MARK ('#') scored +inf, added
-- by every ZADD that can create the set: a sorted set without it was not written by holdfast,
-- and is never modified or deleted. Every other member has a finite score, so the mark is last
-- by rank and in no range that ends at a finite score.
local MARK = '#'

-- True for the error reply of a pcall that met a key of another type; any other error
-- (a missing ACL permission) is raised as it is.
local function isForeign(reply)
  if type(reply) ~= 'table' or not reply.err then return false end
  if string.find(reply.err, 'WRONGTYPE', 1, true) then return true end
  error(reply)
end

-- True when `key` holds data holdfast did not write: a value of another type, or a sorted set
-- without the mark. `recordsIn` (optional): a hash where a layout from before the mark keeps a
-- record 'r:<member>' of every member of the set; a set without the mark whose first member has
-- its record there is that layout's (the next ZADD marks it), not foreign.
local function foreignSet(key, recordsIn)
  local mark = redis.pcall('ZSCORE', key, MARK)
  if isForeign(mark) then return true end
  if mark or redis.call('EXISTS', key) == 0 then return false end
  if not recordsIn then return true end
  local first = redis.call('ZRANGE', key, 0, 0)[1]
  return redis.call('HEXISTS', recordsIn, 'r:' .. first) == 0
end
