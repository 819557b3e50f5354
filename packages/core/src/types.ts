import type { AcquireOptions, TryAcquireOptions, WithLockOptions } from './options.js';

/**
 * The lease contract every holdfast lock implementation honours
 * (`Lease` from this package, `RedlockLease` from @holdfast/redlock).
 */
export interface LeaseLike extends AsyncDisposable {
  readonly name: string;
  readonly token: number;
  readonly holdCount: number;
  readonly signal: AbortSignal;
  readonly isHeld: boolean;
  readonly leaseMs: number;
  release(): Promise<void>;
  extend(leaseMs?: number): Promise<void>;
}

/** The lock contract every holdfast lock implementation honours. */
export interface LockLike<L extends LeaseLike = LeaseLike> {
  readonly name: string;
  acquire(options?: AcquireOptions): Promise<L>;
  tryAcquire(options?: TryAcquireOptions): Promise<L | null>;
  withLock<T>(fn: (lease: L) => Promise<T> | T, options?: WithLockOptions): Promise<T>;
  isLocked(): Promise<boolean>;
  remainingTtlMs(): Promise<number>;
  forceRelease(): Promise<boolean>;
}
