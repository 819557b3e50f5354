import type { LockLostError, LostReason } from './errors.js';

/**
 * The narrow interface between a lock implementation (LockClient, Redlock)
 * and a renewer (the watchdog). The renewer sees holds, never Redis.
 */

/** One owner's hold on one lock, as a renewer sees it. */
export interface RenewalHold {
  readonly name: string;
  readonly token: number;
  /** The lease each renewal sets, in ms. */
  readonly leaseMs: number;
  /** Monotonic time (performance.now()) after which the lease may already be gone on the server. */
  readonly deadline: number;
  /** False once released or lost. */
  readonly active: boolean;
}

/** What became of one hold in a renewal call. */
export type RenewalResult =
  | { readonly status: 'renewed' }
  | { readonly status: 'lost'; readonly reason: Extract<LostReason, 'deleted' | 'taken'> }
  | { readonly status: 'failed'; readonly error: unknown };

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
  attachRenewer(renewer: Renewer): void;
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
