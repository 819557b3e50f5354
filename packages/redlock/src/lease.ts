import { performance } from 'node:perf_hooks';
import { Lease } from '@holdfast/core';
import type { LeaseOps } from '@holdfast/core/internal';
import type { RedlockHold } from './hold.js';

/** Set by RedlockLease's static block: reads the private field, no per-lease map entry. */
let holdOfLease: (lease: RedlockLease) => RedlockHold;

/** @internal The hold a lease belongs to. */
export function holdOf(lease: RedlockLease): RedlockHold {
  return holdOfLease(lease);
}

/**
 * What a lease needs from the Redlock that made it: core's lease operations,
 * run over the instances (one object per Redlock).
 */
export type RedlockLeaseHost = LeaseOps;

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
    super(host, hold, holdCount);
    this.#hold = hold;
    this.validityMs = validityMs;
  }

  /** Milliseconds until the lock may no longer be held (its deadline, moved by extend and renewals); 0 once ended. */
  get remainingValidityMs(): number {
    return this.#hold.ended ? 0 : Math.max(0, Math.floor(this.#hold.deadline - performance.now()));
  }
}
