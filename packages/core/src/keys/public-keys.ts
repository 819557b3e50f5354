/**
 * `@holdfast/core/keys`: the names holdfast gives its Redis keys, for tools
 * that read them without a `LockClient` (the `holdfast` CLI, dashboards,
 * monitoring). What each key holds is described in the README, section "Key
 * layout (`@holdfast/core/keys`)".
 *
 * Stable: the key names built here, the type words in {@link KEY_TYPES}, the
 * client registration, and the data types and fields the README lists. A
 * change to any of them is a new {@link KEY_LAYOUT_VERSION} and a major
 * release of `@holdfast/core`: clients of two layouts would not see each
 * other's locks. Not stable: any field or key the README does not list.
 *
 * @packageDocumentation
 */
import { lockKeys as buildLockKeys, type LockKeys } from './keys.js';

/**
 * The version of the key layout this package writes and reads. Raised (with a
 * major release) whenever a key name, a type word or a documented field
 * changes; a reader compares it with the version it was written for.
 */
export const KEY_LAYOUT_VERSION = 1;

/**
 * The type word of each key a reader needs, by kind: a key is
 * `<prefix>:{<tag>}:<type word><name>` (an idempotency key's name is `<name
 * length>:<name>:<request key>`). The first entry of each kind is its main
 * key, the one a scan finds the name by. The channels and the fencing
 * counter are named by the builders below.
 */
export const KEY_TYPES = {
  /** A mutex (`LockClient.lock`). */
  lock: {
    /** Hash: owner → hold count, `'@' + request id` → fencing token. */
    lock: 'l:',
    /** List: queued waiters' ids, oldest first. */
    queue: 'q:',
    /** Hash: queued waiter id → its entry. */
    waiters: 'w:',
  },
  /** A read-write lock (`LockClient.readWriteLock`). */
  rwlock: {
    /** Hash: owner → `'<r or w>|<holds>|<token>|<request id>|<claim>'`, `'!'` → the writer's owner. */
    lock: 'rl:',
    /** List: queued waiters' ids, oldest first. */
    queue: 'rq:',
    /** Hash: queued waiter id → its entry. */
    waiters: 'rw:',
    /** Sorted set: holder → lease end (server time, ms). */
    expiry: 'rx:',
  },
  /** A semaphore (`LockClient.semaphore`). */
  semaphore: {
    /** Hash: `'#'` → permit count, `'='` → permits in use, owner → `'<permits>|<token>'`. */
    lock: 'sem:',
    /** List: queued waiters' ids, oldest first. */
    queue: 'semq:',
    /** Hash: queued waiter id → its entry. */
    waiters: 'semw:',
    /** Sorted set: holder → lease end (server time, ms). */
    expiry: 'semx:',
  },
  /** An election (`LockClient.election`). */
  election: {
    /** Hash: the leader as a mutex's owner, `'='` → its published value, `'#'` → revision. */
    lock: 'el:',
    /** List: queued candidates' ids, oldest first. */
    queue: 'elq:',
    /** Hash: queued candidate id → its entry. */
    waiters: 'elw:',
  },
  /** A count-down latch (`LockClient.countDownLatch`). */
  latch: {
    /** Hash: `'n'` → the count. */
    latch: 'latch:',
  },
  /** A barrier (`LockClient.barrier`). */
  barrier: {
    /** Hash: `'p'` → party count, `'g'` → generation. */
    barrier: 'bar:',
    /** Sorted set: waiting party → its lease end (server time, ms). */
    parties: 'barp:',
  },
  /** An idempotency key (`LockClient.idempotency`). */
  idempotency: {
    /** Hash: the record of one request key. */
    record: 'idem:',
  },
  /** A flight of `singleFlight`. */
  'single-flight': {
    /** Hash: the flight's record. */
    record: 'sf:',
  },
} as const;

/** A kind of synchronizer, as {@link KEY_TYPES} names it. */
export type KeyKind = keyof typeof KEY_TYPES;

/** The names of a read-write lock: a lock's, and the sorted set of its holders' lease ends. */
export interface ReadWriteLockKeys extends LockKeys {
  /** Sorted set: holder → lease end (server time, ms). */
  readonly expiry: string;
}

/**
 * The names of mutex `name` under `prefix`. `keyPrefix`: the ioredis
 * client's own `keyPrefix`, which Redis sees in front of the channel only
 * (see {@link LockKeys.channel}).
 */
export function lockKeys(prefix: string, name: string, keyPrefix = ''): LockKeys {
  return buildLockKeys(prefix, name, keyPrefix);
}

/** The names of read-write lock `name` under `prefix` (`keyPrefix` as for {@link lockKeys}). */
export function readWriteLockKeys(prefix: string, name: string, keyPrefix = ''): ReadWriteLockKeys {
  return buildLockKeys(prefix, name, keyPrefix, 'r') as ReadWriteLockKeys;
}

export type { LockKeys } from './keys.js';
export { semaphoreKeys, type SemaphoreKeys } from '../semaphore/semaphore-keys.js';
export { electionKeys, type ElectionKeys } from '../election/election-keys.js';
export { latchKeys, type LatchKeys } from '../latch/latch-keys.js';
export { barrierKeys, type BarrierKeys } from '../barrier/barrier-keys.js';
export { idempotencyKeys, flightKeys, type ClaimKeys } from '../idempotency/claim-keys.js';
export { inboxKeys, inboxIndexes, type InboxKeys } from '../inbox/inbox-keys.js';
export { CLIENT_ID_LENGTH, REGISTRATION_TTL_S, registrationKey, parseClientRecord, type ClientRecord } from '../engine/client-registry.js';
