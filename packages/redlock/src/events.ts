import type { AcquiredEvent, LockClientEvents } from '@holdfast/core';

/** Payload of `acquired` on a Redlock: core's, plus the validity left. */
export interface RedlockAcquiredEvent extends AcquiredEvent {
  /** Validity left when the lease was handed out, in ms (see `RedlockLease.validityMs`). */
  readonly validityMs?: number;
}

/** Events of a `Redlock`: those of core's `LockClient` (but `warning`: a Redlock always waits on pub/sub), with `validityMs` on `acquired`. */
export interface RedlockEvents extends Omit<LockClientEvents, 'acquired' | 'warning'> {
  /** A new acquisition or a re-entry, with the validity left. */
  acquired: [event: RedlockAcquiredEvent];
}
