-- Fragment `record` (idempotency keys' and flights' own): the record every operation reads first.
-- Expects: recordKey (KEYS[1]), FOREIGN (what the script returns for foreign data: {-3} or -3).
-- Defines: exists, state, token, holder, fingerprint; the script returns FOREIGN here when the
--   key holds data holdfast did not write (never modified).
-- The record (a hash, written only by these scripts): 'i' -> '1' (the mark: a hash without it
--   is not ours), 's' -> 'r' running | 'd' done | 'e' failed (a flight's error), 't' -> the
--   claim's fencing token, 'o' -> its owner id, 'f' -> the fingerprint ('' for none),
--   'v' -> the stored value ('' while running).
--
-- Why: every read that can find foreign data comes before the first write, so the writing
-- scripts stopped at a refused command leave the record whole.
local fields = redis.pcall('HMGET', recordKey, 'i', 's', 't', 'o', 'f')
if type(fields) == 'table' and fields.err then
  -- Another type at the key is foreign data; any other error (an ACL refusal) fails the call.
  if not string.find(fields.err, 'WRONGTYPE', 1, true) then return error(fields) end
  return FOREIGN
end
local mark, state, token, holder, fingerprint = fields[1], fields[2], fields[3], fields[4], fields[5]
local exists = mark ~= false
if not exists then
  if redis.call('EXISTS', recordKey) == 1 then return FOREIGN end
elseif mark ~= '1' or not (state == 'r' or state == 'd' or state == 'e') or not tonumber(token) or not holder or not fingerprint then
  return FOREIGN
end
