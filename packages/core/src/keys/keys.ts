/**
 * Key layout. Every key of one lock carries the same hash tag, so one script
 * call touches one hash slot (Redis Cluster) whatever the lock name holds:
 *
 *   <prefix>:{<tag>}:l:<name>   lock hash (owner -> hold count, token, request id)
 *   <prefix>:{<tag>}:q:<name>   waiter queue (list)
 *   <prefix>:{<tag>}:w:<name>   waiter table (hash)
 *   <prefix>:{<tag>}:c:<name>   pub/sub channel
 *   <prefix>:{<tag>}:fence      fencing counter, one per hash slot
 *
 * A read-write lock's keys carry the type letter `r` in front of the same
 * letters (`rl:`, `rq:`, `rw:`, `rc:`), so a mutex and a read-write lock of
 * one name never share a key; the fencing counter is the slot's. It has one
 * key more, `rx:<name>`, the sorted set of its holders' lease ends.
 *
 * <tag> is a short string that hashes to one of FENCE_BUCKETS Cluster slots,
 * picked by the CRC16 of the lock name: names spread evenly over 256 slots
 * (spaced 64 apart, so over every node of a cluster of up to 256 primaries),
 * and fencing counters stay bounded at 256 keys however many lock names are
 * used. Each counter key costs about 70 B of Redis memory: 1024 of them added
 * some 30 B to every one of 2000 held locks, 256 add about 9 B.
 */

const SLOT_COUNT = 16384;
/** Number of fencing counters (and of Cluster slots lock keys use). Changing it changes every key. */
export const FENCE_BUCKETS = 256;
const SLOT_STEP = SLOT_COUNT / FENCE_BUCKETS;

const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
    table[i] = crc;
  }
  return table;
})();

/** CRC16-XMODEM, the checksum Redis Cluster uses to place keys. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff]!;
  }
  return crc;
}

/**
 * The Redis Cluster slot of a string hashed whole (no hash-tag rules applied).
 * Every `lock(name)` hashes its name: an ASCII string is its own UTF-8, so
 * its character codes are hashed as they are, without a Buffer; any other
 * character sends the whole string through its UTF-8 bytes.
 */
export function slotOf(value: string): number {
  let crc = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code > 0x7f) return crc16(Buffer.from(value, 'utf8')) % SLOT_COUNT;
    crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ code) & 0xff]!;
  }
  return crc % SLOT_COUNT;
}

let bucketTags: string[] | undefined;

/** A short tag per bucket slot, found once per process (a few ms) by trying base-36 counters. */
function tagForBucket(bucket: number): string {
  if (!bucketTags) {
    const tags = new Array<string>(FENCE_BUCKETS);
    let missing = FENCE_BUCKETS;
    for (let i = 0; missing > 0; i++) {
      const candidate = i.toString(36);
      let crc = 0;
      for (let c = 0; c < candidate.length; c++) {
        crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ candidate.charCodeAt(c)) & 0xff]!;
      }
      const s = crc % SLOT_COUNT;
      if (s % SLOT_STEP === 0 && tags[s / SLOT_STEP] === undefined) {
        tags[s / SLOT_STEP] = candidate;
        missing--;
      }
    }
    bucketTags = tags;
  }
  return bucketTags[bucket]!;
}

/** A key (or channel) from its parts, as one flat string. */
export function joinKey(...parts: string[]): string {
  return parts.join('');
}

/** Every Redis name one lock uses. */
export interface LockKeys {
  /** The lock's hash: owner → hold count, `'@' + request id` → fencing token. */
  readonly lock: string;
  /** List: the waiters' ids, in arrival order. */
  readonly queue: string;
  /** Hash: waiter id → what it waits for. */
  readonly waiters: string;
  /** The fencing counter of the lock's hash slot (a string holding an integer). */
  readonly fence: string;
  /**
   * The pub/sub channel, as Redis names it: with the client's ioredis
   * `keyPrefix` in front. ioredis prefixes the keys a script gets, but not
   * what a script publishes to; so the scripts publish to this full name, and
   * the subscriber (a duplicate without `keyPrefix`) listens on it as it is.
   */
  readonly channel: string;
  /** The Cluster slot of every key above. */
  readonly slot: number;
  /** A read-write lock's sorted set of lease ends (absent for the mutex): its scripts take it last. */
  readonly expiry?: string;
}

/** KEYS of a lock's acquire, release, cancel and force-release scripts: lock, queue, waiters, fence (and a read-write lock's lease ends). */
export function queueScriptKeys(keys: LockKeys): string[] {
  const list = [keys.lock, keys.queue, keys.waiters, keys.fence];
  if (keys.expiry !== undefined) list.push(keys.expiry);
  return list;
}

/** KEYS of a lock's extend and inspect scripts: the lock key (and a read-write lock's lease ends). */
export function holdScriptKeys(keys: LockKeys): string[] {
  return keys.expiry === undefined ? [keys.lock] : [keys.lock, keys.expiry];
}

/**
 * The names of lock `name` under `prefix`. `keyPrefix`: the ioredis client's
 * own `keyPrefix`, which ioredis adds to keys but not to channels a script
 * publishes to (see `LockKeys.channel`).
 */
export function lockKeys(prefix: string, name: string, keyPrefix = '', type = ''): LockKeys {
  const { base, slot } = taggedBase(prefix, name);
  const keys = {
    lock: joinKey(base, type, 'l:', name),
    queue: joinKey(base, type, 'q:', name),
    waiters: joinKey(base, type, 'w:', name),
    fence: joinKey(base, 'fence'),
    channel: joinKey(keyPrefix, base, type, 'c:', name),
    slot,
  };
  return type === 'r' ? { ...keys, expiry: joinKey(base, type, 'x:', name) } : keys;
}

/**
 * `<prefix>:{<tag>}:` for name `name`, and the Cluster slot it hashes to: the
 * start of every key of one synchronizer (a lock, a semaphore), so each kind
 * shares the fencing counter of its slot and keeps all its keys in that slot.
 */
export function taggedBase(prefix: string, name: string): { base: string; slot: number } {
  const bucket = slotOf(name) % FENCE_BUCKETS;
  return { base: `${prefix}:{${tagForBucket(bucket)}}:`, slot: bucket * SLOT_STEP };
}

/**
 * The names of one synchronizer `name` under `prefix`, in the hash slot of its name's tag: for
 * each field of `keys`, `<prefix>:{<tag>}:<letters><name>` (letters such as `'sem:'`, each kind's
 * own, so two kinds of one name never share a key; `'fence'` alone names the slot's fencing
 * counter, shared by every kind); for each field of `channels`, the same with the client's
 * ioredis `keyPrefix` in front (see LockKeys.channel); and the slot.
 */
export function namedKeys<K extends string, C extends string>(
  prefix: string,
  name: string,
  keyPrefix: string,
  keys: Readonly<Record<K, string>>,
  channels: Readonly<Record<C, string>>,
): Record<K | C, string> & { readonly slot: number } {
  const { base, slot } = taggedBase(prefix, name);
  const names: Record<string, string | number> = {};
  for (const [field, letters] of Object.entries<string>(keys)) names[field] = letters === 'fence' ? joinKey(base, 'fence') : joinKey(base, letters, name);
  for (const [field, letters] of Object.entries<string>(channels)) names[field] = joinKey(keyPrefix, base, letters, name);
  names.slot = slot;
  return names as Record<K | C, string> & { readonly slot: number };
}

/**
 * `<prefix>:{<tag>}:` of every one of the FENCE_BUCKETS slots, in bucket
 * order: for a kind that keeps one small key per slot (an inbox's index of
 * its keys) and reads them all, without scanning the keyspace.
 */
export function everyTaggedBase(prefix: string): string[] {
  const bases: string[] = [];
  for (let bucket = 0; bucket < FENCE_BUCKETS; bucket++) bases.push(`${prefix}:{${tagForBucket(bucket)}}:`);
  return bases;
}
