import type { AcquireOptions, TryAcquireOptions, WithLockOptions } from './options.js';

/**
 * The lease contract every holdfast lock implementation honours
 * (`Lease` from this package, `RedlockLease` from @holdfast/redlock).
 */
export interface LeaseLike extends AsyncDisposable {
  /** The lock name. */
  readonly name: string;
  /** Fencing token: strictly greater than every token issued before for this name; equal on re-entry. */
  readonly token: number;
  /** Holds of this owner right after this acquisition (1 for the outer one). */
  readonly holdCount: number;
  /** Aborts, with a `LockLostError` (or `ClientClosedError`) as its reason, when the lease ends unreleased. */
  readonly signal: AbortSignal;
  /** True until the lease is released or lost. */
  readonly isHeld: boolean;
  /** The lease length renewals and extensions use, in ms. */
  readonly leaseMs: number;
  /** Drops this hold; `LockNotHeldError` if it was released already or lost. */
  release(): Promise<void>;
  /** Resets the remaining lease to `leaseMs` (default: the lease length); `LockLostError` if lost. */
  extend(leaseMs?: number): Promise<void>;
}

/** The lock contract every holdfast lock implementation honours. */
export interface LockLike<L extends LeaseLike = LeaseLike> {
  /** The lock name. */
  readonly name: string;
  /** Waits for the lock: `LockTimeoutError` after `waitMs`, `signal.reason` on abort. */
  acquire(options?: AcquireOptions): Promise<L>;
  /** Takes the lock if it is free, without waiting: `null` when busy. */
  tryAcquire(options?: TryAcquireOptions): Promise<L | null>;
  /** Acquires, runs `fn` with the lease, and releases whatever `fn` does. */
  withLock<T>(fn: (lease: L) => Promise<T> | T, options?: WithLockOptions): Promise<T>;
  /** Whether anyone holds the lock now. */
  isLocked(): Promise<boolean>;
  /** The holder's remaining lease in ms; 0 when free. */
  remainingTtlMs(): Promise<number>;
  /** Frees the lock whoever holds it; `true` if a lock was removed. */
  forceRelease(): Promise<boolean>;
}

/** Options of `latch.wait()` and `latch.countDownAndWait()`, and of the waits of a barrier. */
export interface SyncWaitOptions {
  /** The longest wait, in ms: then `LockTimeoutError`. @default no limit */
  readonly waitMs?: number;
  /** Ends the wait with `signal.reason` when it aborts. */
  readonly signal?: AbortSignal;
}
