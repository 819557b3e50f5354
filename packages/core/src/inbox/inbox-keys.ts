import { joinKey, taggedBase, everyTaggedBase } from '../keys/keys.js';

/**
 * Every Redis name one key of an inbox uses. An inbox spans many keys (one
 * queue per conversation), so it cannot live in one hash slot: each key's
 * names carry the tag of the pair (inbox name, key) — its queue, lease,
 * attempts and channel in one slot, as a lock's — and the inbox keeps one
 * index per slot, beside the keys of that slot, so that every script writes
 * in one slot only:
 *
 *   <prefix>:{<tag>}:ibq:<n>:<name>:<key>   queue (list of `<seq>|<posted ms>|<message>`)
 *   <prefix>:{<tag>}:ibl:<n>:<name>:<key>   the processor's lease (string `i1|<token>|<owner>`, with its expiry)
 *   <prefix>:{<tag>}:iba:<n>:<name>:<key>   counts (hash: 'n' -> messages pending, seq -> handler calls begun)
 *   <prefix>:{<tag>}:ibc:<n>:<name>:<key>   pub/sub channel (a removal or release: drain() wakes)
 *   <prefix>:{<tag>}:ibx:<name>             the slot's index of the inbox's keys with pending
 *                                           messages (sorted set: key -> lease end, 0 without processor)
 *   <prefix>:{<tag>}:fence                  the slot's fencing counter (tokens and message seqs)
 *
 * `<n>` is the length of the inbox name, so that a name and a key holding
 * `:` never read as another pair. `keys()` and `recover()` read the index of
 * every slot (FENCE_BUCKETS small keys), never the keyspace.
 */
export interface InboxKeys {
  /** The key's queue. */
  readonly queue: string;
  /** The processor's lease. */
  readonly lease: string;
  /** Counts: messages pending, and handler calls begun per message. */
  readonly attempts: string;
  /** The index of the key's slot. */
  readonly index: string;
  /** The fencing counter of the key's slot. */
  readonly fence: string;
  /** The channel, with the ioredis `keyPrefix` in front (see LockKeys.channel). */
  readonly channel: string;
  /** The Cluster slot of every name above. */
  readonly slot: number;
}

/** The names of key `key` of inbox `name` under `prefix` (`keyPrefix`: the ioredis client's own). */
export function inboxKeys(prefix: string, name: string, key: string, keyPrefix = ''): InboxKeys {
  const pair = `${name.length}:${name}:${key}`;
  const { base, slot } = taggedBase(prefix, pair);
  return {
    queue: joinKey(base, 'ibq:', pair),
    lease: joinKey(base, 'ibl:', pair),
    attempts: joinKey(base, 'iba:', pair),
    index: joinKey(base, 'ibx:', name),
    fence: joinKey(base, 'fence'),
    channel: joinKey(keyPrefix, base, 'ibc:', pair),
    slot,
  };
}

/** The index of every slot of inbox `name` under `prefix`. */
export function inboxIndexes(prefix: string, name: string): string[] {
  return everyTaggedBase(prefix).map((base) => joinKey(base, 'ibx:', name));
}
