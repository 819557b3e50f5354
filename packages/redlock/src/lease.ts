import type { LeaseLike } from '@holdfast/core';
import type { RedlockHold } from './hold.js';

const holds = new WeakMap<RedlockLease, RedlockHold>();

/** @internal The hold a lease belongs to. */
export function holdOf(lease: RedlockLease): RedlockHold {
  return holds.get(lease)!;
}

/** What a lease needs from the Redlock that made it. */
export interface RedlockLeaseHost {
  releaseLease(lease: RedlockLease, hold: RedlockHold, strict: boolean): Promise<void>;
  extendLease(hold: RedlockHold, leaseMs: number | undefined): Promise<void>;
}

/**
 * One acquisition of a Redlock lock: the outer one, or a re-entry. Re-entries
 * share the token, the signal and the deadline of the hold they joined.
 */
export class RedlockLease implements LeaseLike {
  readonly #host: RedlockLeaseHost;
  readonly #hold: RedlockHold;
  #released = false;
  /** The lock name. */
  readonly name: string;
  /**
   * Fencing token: greater than the token of every lease of this lock handed
   * out before, whichever majority granted them (see the README for the
   * failures that void this); equal on re-entry.
   */
  readonly token: number;
  /** Holds of this owner right after this acquisition (1 for the outer one, 2 for the first re-entry…). */
  readonly holdCount: number;
  /**
   * Validity left when this lease was handed out, in ms: the lease minus the
   * time the quorum took minus the drift margin. Work that must finish while
   * the lock is surely held must finish within it (or extend, or use a watchdog).
   */
  readonly validityMs: number;

  /** @internal */
  constructor(host: RedlockLeaseHost, hold: RedlockHold, holdCount: number, validityMs: number) {
    this.#host = host;
    this.#hold = hold;
    holds.set(this, hold);
    this.name = hold.name;
    this.token = hold.token;
    this.holdCount = holdCount;
    this.validityMs = validityMs;
  }

  /** Aborts, with a `LockLostError` as its reason, when the lock is lost before it is released. */
  get signal(): AbortSignal {
    return this.#hold.signal;
  }

  /** True until this lease is released or the lock is lost. */
  get isHeld(): boolean {
    return !this.#released && !this.#hold.ended;
  }

  /** The lease length renewals and extensions use, in ms. */
  get leaseMs(): number {
    return this.#hold.leaseMs;
  }

  /** Milliseconds until the lock may no longer be held (its deadline, moved by extend and renewals); 0 once ended. */
  get remainingValidityMs(): number {
    return this.#hold.ended ? 0 : Math.max(0, Math.floor(this.#hold.deadline - performance.now()));
  }

  /** @internal */
  markReleased(): boolean {
    if (this.#released) return false;
    this.#released = true;
    return true;
  }

  /**
   * Drops this hold on a majority of instances (sent to all). Throws
   * `LockNotHeldError` if already released or lost, `QuorumError` when too
   * few instances answered (the lease is given up and expires by its TTL).
   */
  release(): Promise<void> {
    return this.#host.releaseLease(this, this.#hold, true);
  }

  /**
   * Resets the lock's remaining lease to `leaseMs` (default: this lease's
   * length) on a majority of instances. Throws `LockLostError` if a majority
   * no longer holds it, `QuorumError` if too few answered in time.
   */
  extend(leaseMs?: number): Promise<void> {
    return this.#host.extendLease(this.#hold, leaseMs);
  }

  /** Releases unless already released or lost, so `await using` never masks an error. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.#host.releaseLease(this, this.#hold, false);
  }
}
