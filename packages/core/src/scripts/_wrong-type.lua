-- Fragment `wrongtype` (shared): tell foreign data from any other error of a pcall.
-- Expects: nothing.
-- Defines: isWrongType(reply, command, key, ...): true for the error reply of a pcall that met a
--   key of another type (data these scripts did not write).
--
-- Why: any other error (a missing ACL permission, OOM) is not foreign data: the command runs
-- again unprotected, so the caller sees the server's own error.
local function isWrongType(reply, command, key, ...)
  if type(reply) ~= 'table' or not reply.err then return false end
  if string.find(reply.err, 'WRONGTYPE', 1, true) then return true end
  redis.call(command, key, ...) -- raises the server's own error
  error(reply)
end
