import { namedKeys, type LockKeys } from '../keys/keys.js';

/**
 * Every Redis name one election uses, in the hash slot of its name's tag (the
 * same scheme as a lock's, see keys.ts), with type letters of its own so an
 * election and a lock of the same name never share a key:
 *
 *   <prefix>:{<tag>}:el:<name>    term hash: owner -> '1', '@<request id>' -> epoch,
 *                                 '@c' while a hand-off is unconfirmed, '=' -> value,
 *                                 '#' -> revision (see _election.lua)
 *   <prefix>:{<tag>}:elq:<name>   candidate queue (list)
 *   <prefix>:{<tag>}:elw:<name>   candidate table (hash)
 *   <prefix>:{<tag>}:elc:<name>   candidates' pub/sub channel (hand-offs)
 *   <prefix>:{<tag>}:eln:<name>   observers' pub/sub channel (leader changes)
 *   <prefix>:{<tag>}:fence        the slot's fencing counter, shared with locks
 *
 * Shaped as LockKeys (`lock` is the term hash) so a term rides the mutex's
 * machinery: the slot for renewal grouping, the channel for the candidates.
 * Observers listen on a channel of their own, so a leader change never wakes
 * the candidates (who only care about hand-offs) and a hand-off never wakes
 * the observers before the new leader has confirmed.
 */
export interface ElectionKeys extends LockKeys {
  /** The observers' channel (with the client's own key prefix, as `channel`). */
  readonly news: string;
}

/** The names of election `name` under `prefix` (`keyPrefix`: the ioredis client's own, see LockKeys.channel). */
export function electionKeys(prefix: string, name: string, keyPrefix = ''): ElectionKeys {
  return namedKeys(prefix, name, keyPrefix, { lock: 'el:', queue: 'elq:', waiters: 'elw:', fence: 'fence' }, { channel: 'elc:', news: 'eln:' });
}

/** The four keys the acquire and release scripts take, in their KEYS order. */
export function scriptKeys(keys: ElectionKeys): string[] {
  return [keys.lock, keys.queue, keys.waiters, keys.fence];
}
