import { KeyConflictError } from '../errors/errors.js';
import type { Engine } from '../engine/engine.js';
import { conflictKind } from '../engine/kind.js';
import type { LockKeys } from '../keys/keys.js';
import { acquireLease, withLease } from '../lease/acquire-lease.js';
import type { Lease } from '../lease/lease.js';
import { forceReleaseLock, inspectLock, MUTEX, type LockSideKind } from './mutex-calls.js';
import type { AcquireOptions, LockLike, TryAcquireOptions, WithLockOptions } from '../options/options.js';

/**
 * A named lock. Creating one does no I/O; every method goes through the
 * client it came from (`client.lock(name)`).
 *
 * @hideconstructor
 */
export class Lock implements LockLike<Lease> {
  readonly #engine: Engine;
  /** The lock's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: LockKeys;
  /**
   * Which scripts serve this lock: the mutex's, or a side of a read-write lock.
   * @internal
   */
  readonly kind: LockSideKind;

  /** @internal */
  constructor(engine: Engine, name: string, keys: LockKeys, kind: LockSideKind = MUTEX) {
    this.#engine = engine;
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
    return acquireLease(this.#engine, this, options, 'wait') as Promise<Lease>;
  }

  /** Takes the lock if it is free (or re-enters), without waiting: `null` when busy. */
  tryAcquire(options?: TryAcquireOptions): Promise<Lease | null> {
    return acquireLease(this.#engine, this, options, 'try');
  }

  /**
   * Runs `fn` holding the lock and releases it afterwards, whatever `fn` does.
   * Calls made from inside `fn` (and tasks it starts) re-enter this lock.
   * If the lease is lost while `fn` runs, the promise rejects with that
   * `LockLostError` even when `fn` resolved: its work was not exclusive.
   */
  withLock<T>(fn: (lease: Lease) => Promise<T> | T, options?: WithLockOptions): Promise<T> {
    return withLease(this.#engine, this, fn, options);
  }

  /** True when any owner holds the lock now. */
  async isLocked(): Promise<boolean> {
    return (await this.#inspect()).pttl !== -2;
  }

  /** Milliseconds until the current holder's lease ends; 0 when the lock is free. */
  async remainingTtlMs(): Promise<number> {
    return Math.max(0, (await this.#inspect()).pttl);
  }

  /**
   * The fencing token of the current holder; `null` when the lock is free, or
   * when its key holds data holdfast did not write (`isLocked()` is true then).
   */
  async currentToken(): Promise<number | null> {
    const { pttl, token, foreign } = await this.#inspect();
    return pttl === -2 || foreign ? null : token;
  }

  /**
   * Frees the lock whoever holds it and wakes the next waiter. Leases of this
   * client on it are reported lost (`deleted`). Resolves true when a lock was
   * removed; rejects with `KeyConflictError`, removing nothing, when the key
   * holds data holdfast did not write.
   */
  async forceRelease(): Promise<boolean> {
    this.#engine.assertOpen();
    const outcome = await forceReleaseLock(this.#engine, this.keys, this.kind);
    if (outcome.foreign) throw new KeyConflictError(this.name, conflictKind(this.kind));
    // Force-releasing both sides of a read-write lock frees every hold of it.
    const both = this.kind.role === 'all';
    this.#engine.forceReleased(this.keys.lock, (hold) => both || hold.kind === this.kind);
    return outcome.removed;
  }

  #inspect(): Promise<{ pttl: number; token: number; foreign: boolean }> {
    this.#engine.assertOpen();
    return inspectLock(this.#engine, this.keys, this.kind);
  }
}

/** `client.lock(name)`: a mutex by name (no I/O). */
export function newLock(engine: Engine, name: string): Lock {
  engine.assertOpen();
  const keys = engine.lockKeys(name);
  return new Lock(engine, name, keys);
}
