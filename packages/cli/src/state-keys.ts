import { barrierKeys, electionKeys, flightKeys, idempotencyKeys, latchKeys, lockKeys, semaphoreKeys } from '@holdfast/core/internal';

/**
 * What a name is in Redis: a mutex, a read-write lock, a semaphore, an election, a count-down latch,
 * a barrier, an idempotency key (named `<name>:<request key>`) or a flight of `singleFlight`.
 */
export type SyncKind = 'lock' | 'rwlock' | 'semaphore' | 'election' | 'latch' | 'barrier' | 'idempotency' | 'single-flight';

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

// The type letters of each kind's keys, in front of `l:`, `q:`, `w:` (see core's keys.ts, semaphore-keys.ts,
// election-keys.ts, latch-keys.ts and barrier-keys.ts; a latch and a barrier have no queue).
const LETTERS: Record<SyncKind, { lock: string; queue: string; waiters: string; expiry: string }> = {
  lock: { lock: 'l:', queue: 'q:', waiters: 'w:', expiry: '' },
  rwlock: { lock: 'rl:', queue: 'rq:', waiters: 'rw:', expiry: 'rx:' },
  semaphore: { lock: 'sem:', queue: 'semq:', waiters: 'semw:', expiry: 'semx:' },
  latch: { lock: 'latch:', queue: '', waiters: '', expiry: '' },
  barrier: { lock: 'bar:', queue: '', waiters: '', expiry: 'barp:' },
  election: { lock: 'el:', queue: 'elq:', waiters: 'elw:', expiry: '' },
  // An idempotency key's name is `<name length>:<name>:<request key>` in its key (claim-keys.ts).
  idempotency: { lock: 'idem:', queue: '', waiters: '', expiry: '' },
  'single-flight': { lock: 'sf:', queue: '', waiters: '', expiry: '' },
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
        : (({ expiry, ...keys }) => ({ ...keys, expiry: expiry ?? '' }))(lockKeys(prefix, name, '', kind === 'rwlock' ? 'r' : ''));
  return { lock: keys.lock, queue: keys.queue, waiters: keys.waiters, expiry: keys.expiry, text: keys.lock };
}
