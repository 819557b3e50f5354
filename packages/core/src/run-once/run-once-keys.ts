import { namedKeys } from '../keys/keys.js';

/**
 * The Redis names of one run-once key, in the hash slot of its key's tag (the
 * scheme of a lock's names, see keys.ts), with a type word of its own so a
 * claim never shares a key with a lock or a semaphore of the same name:
 *
 *   <prefix>:{<tag>}:once:<key>   the claim: string `o1|<token>|<owner>`, with its expiry
 *   <prefix>:{<tag>}:fence        the slot's fencing counter, shared with locks
 *
 * The client's ioredis `keyPrefix`, when it has one, is added by the client in
 * front of both (no channel is involved, so nothing else needs it).
 */
export interface RunOnceKeys {
  /** The claim. */
  readonly claim: string;
  /** The fencing counter of the claim's slot. */
  readonly fence: string;
  /** The Redis Cluster slot both keys hash to. */
  readonly slot: number;
}

/** The names of run-once key `key` under `prefix`. */
export function runOnceKeys(prefix: string, key: string): RunOnceKeys {
  return namedKeys(prefix, key, '', { claim: 'once:', fence: 'fence' }, {});
}
