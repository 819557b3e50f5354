import type { AcquireOptions, LockLike, TryAcquireOptions, WithLockOptions } from '@holdfast/core';
import type { LockKeys } from '@holdfast/core/internal';
import type { RedlockLease } from './lease.js';

/** What a lock needs from its Redlock (kept off the Redlock's public surface). */
export interface RedlockLockHost {
  acquire(lock: RedlockLock, options: unknown, mode: 'wait' | 'try'): Promise<RedlockLease | null>;
  withLock<T>(lock: RedlockLock, fn: (lease: RedlockLease) => Promise<T> | T, options: unknown): Promise<T>;
  inspect(lock: RedlockLock): Promise<{ locked: boolean; remainingMs: number; token: number | null }>;
  forceRelease(lock: RedlockLock): Promise<boolean>;
}

/**
 * A named lock over the Redlock's instances: core's Lock interface. Creating
 * one does no I/O.
 *
 * @hideconstructor
 */
export class RedlockLock implements LockLike<RedlockLease> {
  readonly #host: RedlockLockHost;
  /** The lock's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: LockKeys;

  /** @internal */
  constructor(host: RedlockLockHost, name: string, keys: LockKeys) {
    this.#host = host;
    this.name = name;
    this.keys = keys;
  }

  /**
   * Waits until a majority grants the lock. Rejects with `LockTimeoutError`
   * when `waitMs` runs out (its `cause` is the last `QuorumError`), with
   * `QuorumError` when, without `waitMs`, a majority stayed unreachable for
   * `retries` + 1 attempts in a row, or with `signal.reason`. Inside
   * `withLock` of the same lock it re-enters instead.
   */
  acquire(options?: AcquireOptions): Promise<RedlockLease> {
    return this.#host.acquire(this, options, 'wait') as Promise<RedlockLease>;
  }

  /**
   * One attempt: the lease, or `null` when other owners hold the lock (or
   * competing clients split the votes). Throws `QuorumError` when a majority
   * could not be reached, or only too late to leave usable validity.
   */
  tryAcquire(options?: TryAcquireOptions): Promise<RedlockLease | null> {
    return this.#host.acquire(this, options, 'try');
  }

  /**
   * Runs `fn` holding the lock and releases it afterwards, whatever `fn`
   * does. Calls made from inside `fn` (and tasks it starts) re-enter. If the
   * lock is lost while `fn` runs, rejects with that `LockLostError`.
   */
  withLock<T>(fn: (lease: RedlockLease) => Promise<T> | T, options?: WithLockOptions): Promise<T> {
    return this.#host.withLock(this, fn, options);
  }

  /** True when a majority of instances has the lock's key. */
  async isLocked(): Promise<boolean> {
    return (await this.#host.inspect(this)).locked;
  }

  /** Milliseconds until fewer than a majority of instances still have the key; 0 when not locked. */
  async remainingTtlMs(): Promise<number> {
    return (await this.#host.inspect(this)).remainingMs;
  }

  /** The largest token among the instances that have the key; `null` when not locked. */
  async currentToken(): Promise<number | null> {
    return (await this.#host.inspect(this)).token;
  }

  /**
   * Frees the lock on every instance whoever holds it. Leases of this Redlock
   * on it are reported lost (`deleted`). Resolves true when any key was removed.
   */
  forceRelease(): Promise<boolean> {
    return this.#host.forceRelease(this);
  }
}
