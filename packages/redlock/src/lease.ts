import { Lease } from '@holdfast/core';
import type { LeaseHost } from '@holdfast/core/internal';
import type { RedlockHold } from './hold.js';

/** Set by RedlockLease's static block: reads the private field, no per-lease map entry. */
let holdOfLease: (lease: RedlockLease) => RedlockHold;

/** @internal The hold a lease belongs to. */
export function holdOf(lease: RedlockLease): RedlockHold {
  return holdOfLease(lease);
}

/** What a lease needs from the Redlock that made it. */
export interface RedlockLeaseHost {
  releaseLease(lease: RedlockLease, hold: RedlockHold, strict: boolean): Promise<void>;
  extendLease(hold: RedlockHold, leaseMs: number | undefined): Promise<void>;
  sweepExpired(): void;
}

/** Core's lease protocol, served by a Redlock. */
function adapt(host: RedlockLeaseHost): LeaseHost {
  return {
    releaseLease: (lease, hold) => host.releaseLease(lease as RedlockLease, hold as RedlockHold, true),
    disposeLease: (lease, hold) => host.releaseLease(lease as RedlockLease, hold as RedlockHold, false),
    extendLease: (_lease, hold, leaseMs) => host.extendLease(hold as RedlockHold, leaseMs),
    sweepExpired: () => host.sweepExpired(),
  };
}

const adapted = new WeakMap<RedlockLeaseHost, LeaseHost>();

/**
 * One acquisition of a Redlock lock: core's `Lease` (same token, hold count,
 * signal, release, extend, async dispose), plus the validity a quorum leaves.
 * Release and extend need a majority of instances; `release()` throws
 * `QuorumError` when too few answered (the lease then expires by its TTL),
 * `extend()` throws `LockLostError` when a majority no longer holds it.
 *
 * @hideconstructor
 */
export class RedlockLease extends Lease {
  readonly #hold: RedlockHold;

  static {
    holdOfLease = (lease) => lease.#hold;
  }
  /**
   * Validity left when this lease was handed out, in ms: the lease minus the
   * time the quorum took minus the drift margin. Work that must finish while
   * the lock is surely held must finish within it (or extend, or use a watchdog).
   * The token is greater than every token handed out before for this lock,
   * whichever majority granted it (see the README for the failures that void this).
   */
  readonly validityMs: number;

  /** @internal */
  constructor(host: RedlockLeaseHost, hold: RedlockHold, holdCount: number, validityMs: number) {
    let leaseHost = adapted.get(host);
    if (!leaseHost) adapted.set(host, (leaseHost = adapt(host)));
    super(leaseHost, hold, holdCount);
    this.#hold = hold;
    this.validityMs = validityMs;
  }

  /** Milliseconds until the lock may no longer be held (its deadline, moved by extend and renewals); 0 once ended. */
  get remainingValidityMs(): number {
    return this.#hold.ended ? 0 : Math.max(0, Math.floor(this.#hold.deadline - performance.now()));
  }
}
