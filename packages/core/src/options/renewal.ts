import type { LockLostError, LostReason } from '../errors/errors.js';

/**
 * The narrow interface between a lock implementation (LockClient, Redlock)
 * and a renewer (the watchdog). The renewer sees holds, never Redis.
 */

/** One owner's hold on one lock, as a renewer sees it. */
export interface RenewalHold {
  /** The lock name. */
  readonly name: string;
  /** The hold's fencing token. */
  readonly token: number;
  /** The lease each renewal sets, in ms. */
  readonly leaseMs: number;
  /** Monotonic time (performance.now()) after which the lease may already be gone on the server. */
  readonly deadline: number;
  /** False once released or lost. */
  readonly active: boolean;
  /**
   * What the target's own events about this hold add to their payload (the
   * `kind` of a read-write lock's side or a semaphore, the `multiLock` it is
   * a part of), so a renewer's events can say the same; absent when none.
   */
  readonly eventFields?: {
    /** A read-write lock's side, `semaphore`, or `election`; absent for the mutex. */
    readonly kind?: 'read' | 'write' | 'semaphore' | 'election';
    /** Every name of the multi-lock the hold is a part of. */
    readonly multiLock?: readonly string[];
  };
}

/** What became of one hold in a renewal call. */
export type RenewalResult =
  | {
      /** The lease was reset to its full length. */
      readonly status: 'renewed';
    }
  | {
      /** The lock is no longer this hold's. */
      readonly status: 'lost';
      /** Whether its key was gone or another owner held it. */
      readonly reason: Extract<LostReason, 'deleted' | 'taken'>;
    }
  | {
      /** The call failed (timeout, connection, server error): try again while the lease lasts. */
      readonly status: 'failed';
      /** What the call failed with. */
      readonly error: unknown;
    };

/** Implemented by the watchdog; called by the target synchronously. */
export interface Renewer {
  /** The lease given to acquisitions that name none; those are renewed. */
  readonly timeoutMs: number;
  /** A renewed hold began. */
  watch(hold: RenewalHold): void;
  /** A hold stopped needing renewal (release started, loss, client closed). */
  unwatch(hold: RenewalHold): void;
  /** A watched hold was lost, whoever noticed it. */
  lost(hold: RenewalHold, error: LockLostError): void;
  /** The target closed: stop without waiting for anything. */
  targetClosed(): void;
}

/** Implemented by LockClient and Redlock. */
export interface RenewalTarget {
  /** Makes `renewer` renew this target's acquisitions that name no `leaseMs`; one renewer per target. */
  attachRenewer(renewer: Renewer): void;
  /** Undoes `attachRenewer` (nothing if `renewer` is not the one attached). */
  detachRenewer(renewer: Renewer): void;
  /**
   * Renews the given holds with as few Redis calls as the topology allows
   * (batched per node or hash slot, chunked). Results come in input order.
   * Never rejects: a failed call yields `failed` for each hold it carried.
   */
  renewHolds(holds: readonly RenewalHold[]): Promise<RenewalResult[]>;
  /** A renewal sent at `startedAt` (monotonic ms) was confirmed: move the hold's deadline. */
  confirmRenewal(hold: RenewalHold, startedAt: number): void;
  /** Declare a hold lost: aborts its signal and emits `lost`. No-op if already ended. */
  markLost(hold: RenewalHold, reason: LostReason, cause?: unknown): void;
  /** Marks lost, synchronously, every hold whose deadline has passed (after an event-loop stall). */
  sweepExpired(): void;
}
