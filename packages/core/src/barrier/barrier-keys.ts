import { namedKeys } from '../keys/keys.js';

/**
 * Every Redis name one barrier uses, in the hash slot of its name's tag (as
 * a lock's, see keys.ts), with type letters of their own:
 *
 *   <prefix>:{<tag>}:bar:<name>    hash: 'p' -> party count, 'e' -> epoch, 'g' -> generation,
 *                                  'x:<epoch>' -> why it broke, 'r:<party>' -> its arrival
 *   <prefix>:{<tag>}:barp:<name>   sorted set: waiting party -> its lease end (server ms)
 *   <prefix>:{<tag>}:barr:<name>   sorted set: party -> when its arrival may be forgotten
 *   <prefix>:{<tag>}:barc:<name>   pub/sub channel ('t' trip, 'b' break, 'a' short lease)
 */
export interface BarrierKeys {
  /** The barrier's hash. */
  readonly barrier: string;
  /** The waiting parties' lease ends. */
  readonly parties: string;
  /** The arrival records' end times. */
  readonly records: string;
  /** The channel, with the ioredis `keyPrefix` in front (see LockKeys.channel). */
  readonly channel: string;
  /** The Cluster slot of every key above. */
  readonly slot: number;
}

/** The names of barrier `name` under `prefix` (`keyPrefix`: the ioredis client's own). */
export function barrierKeys(prefix: string, name: string, keyPrefix = ''): BarrierKeys {
  return namedKeys(prefix, name, keyPrefix, { barrier: 'bar:', parties: 'barp:', records: 'barr:' }, { channel: 'barc:' });
}
