import type { LockLostError, LostReason } from '@holdfast/core';

/** Payload of `renewed`: one per tick in which at least one lease was renewed. */
export interface RenewedEvent {
  /** Leases renewed by this tick. */
  readonly count: number;
  /** Leases this tick found deleted or taken (each also gets its own `lost` event). */
  readonly lost: number;
  /** Leases whose renewal failed this tick (also reported by `renewalFailed`). */
  readonly failed: number;
  /** Time from sending the renewals to handling their replies, in ms. */
  readonly durationMs: number;
  /**
   * When the renewals were sent, as `performance.now()`. Each renewed lease is
   * now counted as held until `startedAt + timeoutMs − drift margin`.
   */
  readonly startedAt: number;
}

/** Payload of `renewalFailed`: some renewals of a tick failed; those leases are not lost yet. */
export interface RenewalFailedEvent {
  /** Why (usually a `RedisTimeoutError` or a `RedisCommandError` from core). */
  readonly error: unknown;
  /** Leases whose renewal failed this tick. */
  readonly count: number;
  /** Ticks in a row, this one included, in which some renewal failed. */
  readonly consecutiveFailures: number;
  /** Time the failed tick took, in ms. */
  readonly durationMs: number;
}

/** Payload of `lost`: a renewed lease ended without being released. */
export interface LeaseLostEvent {
  /** The lock name. */
  readonly name: string;
  /** The lost lease's fencing token. */
  readonly token: number;
  /**
   * `deleted` / `taken`: a renewal found the key gone or owned by someone else.
   * `unreachable`: no renewal was confirmed before the lease could have run out
   * on the server. `expired`: reported by targets that do not tell the two apart.
   */
  readonly reason: LostReason;
  /** The error the lease's `signal` was aborted with. */
  readonly error: LockLostError;
  /**
   * Set when this lock was taken as a part of a multi-lock: every name of
   * that multi-lock (as in the client's own `lost` event). `name` is the part concerned.
   */
  readonly multiLock?: readonly string[];
  /** What was lost, when not a mutex (absent for the mutex): a side of a read-write lock, or `semaphore` (as in the client's own `lost` event). */
  readonly kind?: 'read' | 'write' | 'semaphore' | 'election';
}

/** Events of a `Watchdog`, event → listener arguments. */
export interface WatchdogEvents {
  /** One per tick that renewed at least one lease. */
  renewed: [event: RenewedEvent];
  /** Some renewals of a tick failed; those leases are not lost yet and are tried again. */
  renewalFailed: [event: RenewalFailedEvent];
  /** A renewed lease was lost. */
  lost: [event: LeaseLostEvent];
  /** A listener that threw, or an unexpected failure inside a tick; never thrown at the caller. */
  error: [error: unknown];
}
