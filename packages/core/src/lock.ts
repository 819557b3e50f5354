import type { Lease } from './lease.js';
import type { LockKeys } from './keys.js';
import { MUTEX, type LockKind } from './lock-kind.js';
import type { LockLike } from './types.js';
import type { AcquireOptions, TryAcquireOptions, WithLockOptions } from './options.js';

/** What a Lock needs from its client (kept off the client's public surface). */
export interface LockHost {
  acquire(lock: Lock, options: AcquireOptions | undefined, mode: 'wait' | 'try'): Promise<Lease | null>;
  withLock<T>(lock: Lock, fn: (lease: Lease) => Promise<T> | T, options: WithLockOptions | undefined): Promise<T>;
  inspect(lock: Lock): Promise<{ pttl: number; token: number; foreign: boolean }>;
  forceRelease(lock: Lock): Promise<boolean>;
}

/**
 * A named lock. Creating one does no I/O; every method goes through the
 * client it came from (`client.lock(name)`).
 *
 * @hideconstructor
 */
export class Lock implements LockLike<Lease> {
  readonly #host: LockHost;
  /** The lock's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: LockKeys;
  /**
   * Which scripts serve this lock: the mutex's, or a side of a read-write lock.
   * @internal
   */
  readonly kind: LockKind;

  /** @internal */
  constructor(host: LockHost, name: string, keys: LockKeys, kind: LockKind = MUTEX) {
    this.#host = host;
    this.name = name;
    this.keys = keys;
    this.kind = kind;
  }

  /**
   * Waits until the lock is held (or `waitMs` runs out: `LockTimeoutError`;
   * or `signal` aborts: its reason). Inside `withLock` of the same lock it
   * re-enters at once; anywhere else it is a new owner, which waits its turn
   * even when the same task already holds the lock through another acquire().
   */
  acquire(options?: AcquireOptions): Promise<Lease> {
    return this.#host.acquire(this, options, 'wait') as Promise<Lease>;
  }

  /** Takes the lock if it is free (or re-enters), without waiting: `null` when busy. */
  tryAcquire(options?: TryAcquireOptions): Promise<Lease | null> {
    return this.#host.acquire(this, options, 'try');
  }

  /**
   * Runs `fn` holding the lock and releases it afterwards, whatever `fn` does.
   * Calls made from inside `fn` (and tasks it starts) re-enter this lock.
   * If the lease is lost while `fn` runs, the promise rejects with that
   * `LockLostError` even when `fn` resolved: its work was not exclusive.
   */
  withLock<T>(fn: (lease: Lease) => Promise<T> | T, options?: WithLockOptions): Promise<T> {
    return this.#host.withLock(this, fn, options);
  }

  /** True when any owner holds the lock now. */
  async isLocked(): Promise<boolean> {
    return (await this.#host.inspect(this)).pttl !== -2;
  }

  /** Milliseconds until the current holder's lease ends; 0 when the lock is free. */
  async remainingTtlMs(): Promise<number> {
    return Math.max(0, (await this.#host.inspect(this)).pttl);
  }

  /**
   * The fencing token of the current holder; `null` when the lock is free, or
   * when its key holds data holdfast did not write (`isLocked()` is true then).
   */
  async currentToken(): Promise<number | null> {
    const { pttl, token, foreign } = await this.#host.inspect(this);
    return pttl === -2 || foreign ? null : token;
  }

  /**
   * Frees the lock whoever holds it and wakes the next waiter. Leases of this
   * client on it are reported lost (`deleted`). Resolves true when a lock was
   * removed; rejects with `KeyConflictError`, removing nothing, when the key
   * holds data holdfast did not write.
   */
  forceRelease(): Promise<boolean> {
    return this.#host.forceRelease(this);
  }
}
