import { namedKeys } from '../keys/keys.js';

/**
 * The Redis names of one idempotency key (`name` + request key) or one
 * flight, in the hash slot of their identity's tag (the scheme of a lock's
 * names, see keys.ts), with type words of their own so they never share a
 * key with a lock, a run-once claim or each other:
 *
 *   <prefix>:{<tag>}:idem:<name length>:<name>:<request key>   the record (hash, see _record.lua)
 *   <prefix>:{<tag>}:idemc:<name length>:<name>:<request key>  its pub/sub channel
 *   <prefix>:{<tag>}:sf:<key>  /  <prefix>:{<tag>}:sfc:<key>  a flight's record and channel
 *   <prefix>:{<tag>}:fence                                     the slot's fencing counter
 *
 * The name's length makes the split between name and request key unambiguous.
 */
export interface ClaimKeys {
  /** The record. */
  readonly record: string;
  /** The fencing counter of the record's slot. */
  readonly fence: string;
  /** The channel, with the ioredis `keyPrefix` in front (see LockKeys.channel). */
  readonly channel: string;
  /** The Cluster slot of every key above. */
  readonly slot: number;
}

/** The names of request key `requestKey` of idempotency `name` under `prefix`. */
export function idempotencyKeys(prefix: string, name: string, requestKey: string, keyPrefix = ''): ClaimKeys {
  return namedKeys(prefix, `${name.length}:${name}:${requestKey}`, keyPrefix, { record: 'idem:', fence: 'fence' }, { channel: 'idemc:' });
}

/** The names of flight `key` under `prefix`. */
export function flightKeys(prefix: string, key: string, keyPrefix = ''): ClaimKeys {
  return namedKeys(prefix, key, keyPrefix, { record: 'sf:', fence: 'fence' }, { channel: 'sfc:' });
}
