import { namedKeys } from '../keys/keys.js';

/**
 * Every Redis name one count-down latch uses, in the hash slot of its name's
 * tag (as a lock's, see keys.ts), with type letters of their own:
 *
 *   <prefix>:{<tag>}:latch:<name>    hash: 'n' -> count, 'r:<request id>' -> what it did
 *   <prefix>:{<tag>}:latchr:<name>   sorted set: '#' -> +inf (its mark: a set without it is
 *                                    foreign), request id -> when its record may go
 *   <prefix>:{<tag>}:latchc:<name>   pub/sub channel ('z' when the count reaches 0)
 */
export interface LatchKeys {
  /** The latch's hash. */
  readonly latch: string;
  /** The request records' end times. */
  readonly requests: string;
  /** The channel, with the ioredis `keyPrefix` in front (see LockKeys.channel). */
  readonly channel: string;
  /** The Cluster slot of every key above. */
  readonly slot: number;
}

/** The names of latch `name` under `prefix` (`keyPrefix`: the ioredis client's own). */
export function latchKeys(prefix: string, name: string, keyPrefix = ''): LatchKeys {
  return namedKeys(prefix, name, keyPrefix, { latch: 'latch:', requests: 'latchr:' }, { channel: 'latchc:' });
}
