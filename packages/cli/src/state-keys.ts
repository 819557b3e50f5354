import {
  KEY_TYPES,
  barrierKeys,
  electionKeys,
  flightKeys,
  idempotencyKeys,
  latchKeys,
  lockKeys,
  readWriteLockKeys,
  semaphoreKeys,
  type KeyKind,
} from '@holdfast/core/keys';

/**
 * What a name is in Redis: a mutex, a read-write lock, a semaphore, an election, a count-down latch,
 * a barrier, an idempotency key (named `<name>:<request key>`) or a flight of `singleFlight`.
 */
export type SyncKind = KeyKind;

/** Every kind, in the order `inspect` lists a name that is several. */
export const SYNC_KINDS: readonly SyncKind[] = ['lock', 'rwlock', 'semaphore', 'election', 'latch', 'barrier', 'idempotency', 'single-flight'];

/** A name that is not UTF-8, as `scanNames` found it: its bytes, and its keys' start (`<prefix>:{<tag>}:`). */
export interface RawName {
  /** The start every key of the name shares, tag included, as found. */
  readonly base: Buffer;
  /** The name's bytes. */
  readonly bytes: Buffer;
}

/** The keys `readState` reads for one name: strings for a UTF-8 name, exact bytes for another. */
export interface StateKeys {
  /** The main key (a hash). */
  readonly lock: string | Buffer;
  /** The waiter queue (a list). */
  readonly queue: string | Buffer;
  /** The waiter table (a hash). */
  readonly waiters: string | Buffer;
  /** Semaphore: the holders' lease ends; barrier: the waiting parties' (sorted sets). */
  readonly expiry: string | Buffer;
  /** The main key as text (bytes that are not UTF-8 as U+FFFD). */
  readonly text: string;
}

// The type words of the keys `readState` reads, by role (KEY_TYPES; '' where a kind has no such key).
const LETTERS: Record<SyncKind, { lock: string; queue: string; waiters: string; expiry: string }> = {
  lock: { ...KEY_TYPES.lock, expiry: '' },
  rwlock: KEY_TYPES.rwlock,
  semaphore: KEY_TYPES.semaphore,
  latch: { lock: KEY_TYPES.latch.latch, queue: '', waiters: '', expiry: '' },
  barrier: { lock: KEY_TYPES.barrier.barrier, queue: '', waiters: '', expiry: KEY_TYPES.barrier.parties },
  election: { ...KEY_TYPES.election, expiry: '' },
  idempotency: { lock: KEY_TYPES.idempotency.record, queue: '', waiters: '', expiry: '' },
  'single-flight': { lock: KEY_TYPES['single-flight'].record, queue: '', waiters: '', expiry: '' },
};

/**
 * The keys of `name` of `kind` under `prefix`; of the exact bytes when `raw` is given. An
 * idempotency key's `name` is `<name>:<request key>`, split after `nameLength` UTF-16 units.
 */
export function stateKeys(prefix: string, name: string, kind: SyncKind, raw?: RawName, nameLength?: number): StateKeys {
  if (raw) {
    // A string would be sent as UTF-8, which these bytes are not: the keys are built of bytes.
    const key = (letters: string) => Buffer.concat([raw.base, Buffer.from(letters), raw.bytes]);
    const letters = LETTERS[kind];
    const lock = key(letters.lock);
    return { lock, queue: key(letters.queue), waiters: key(letters.waiters), expiry: key(letters.expiry), text: lock.toString('utf8') };
  }
  if (kind === 'latch') {
    const keys = latchKeys(prefix, name);
    return { lock: keys.latch, queue: '', waiters: '', expiry: '', text: keys.latch };
  }
  if (kind === 'idempotency' || kind === 'single-flight') {
    const { record } =
      kind === 'single-flight' ? flightKeys(prefix, name) : idempotencyKeys(prefix, name.slice(0, nameLength ?? 0), name.slice((nameLength ?? 0) + 1));
    return { lock: record, queue: '', waiters: '', expiry: '', text: record };
  }
  if (kind === 'barrier') {
    const keys = barrierKeys(prefix, name);
    return { lock: keys.barrier, queue: '', waiters: '', expiry: keys.parties, text: keys.barrier };
  }
  const keys =
    kind === 'semaphore'
      ? semaphoreKeys(prefix, name)
      : kind === 'election'
        ? { ...electionKeys(prefix, name), expiry: '' }
        : kind === 'rwlock'
          ? readWriteLockKeys(prefix, name)
          : { ...lockKeys(prefix, name), expiry: '' };
  return { lock: keys.lock, queue: keys.queue, waiters: keys.waiters, expiry: keys.expiry, text: keys.lock };
}
