import { performance } from 'node:perf_hooks';
import type { Hold } from '../engine/hold.js';
import type { LeaseLike } from '../options/options.js';

// Set once, by the class's static block: reads the private field without a
// WeakMap entry per lease (an insertion and an ephemeron for the GC each).
let holdField: (lease: Lease) => Hold;

/** @internal The hold a lease belongs to. */
export function holdOf(lease: Lease): Hold {
  return holdField(lease);
}

/**
 * How a lease's operations run: the engine's (lease-ops.ts, through
 * `engineLeaseOps`), or a Redlock's over its instances. One object per
 * client, shared by all its leases.
 */
export interface LeaseOps {
  /** Drops one hold of `lease`; `strict` (release()) rejects for a lease released or lost already, disposal does not. */
  release(lease: Lease, hold: Hold, strict: boolean): Promise<void>;
  /** Resets the remaining lease to `leaseMs` (default: the hold's lease length). */
  extend(hold: Hold, leaseMs: number | undefined): Promise<void>;
  /**
   * Declares lost, now, every hold whose deadline has passed: after an
   * event-loop stall the deadline timer may not have run yet.
   */
  sweepExpired(): void;
}

/**
 * One acquisition of a lock: the outer one, or a re-entry. Re-entries share
 * the token, the signal and the lease deadline of the hold they joined.
 *
 * @hideconstructor
 */
export class Lease implements LeaseLike {
  readonly #ops: LeaseOps;
  readonly #hold: Hold;
  #released = false;
  /** The lock name. */
  readonly name: string;
  /**
   * Fencing token: strictly greater than every token issued before for this
   * name; equal on re-entry. A read lease of a read-write lock carries the
   * slot's fencing counter instead: at least every earlier write's token,
   * below every later write's (see `ReadWriteLock`).
   */
  readonly token: number;
  /** Holds of this owner right after this acquisition (1 for the outer one, 2 for the first re-entry…). */
  readonly holdCount: number;

  /** @internal */
  constructor(ops: LeaseOps, hold: Hold, holdCount: number) {
    this.#ops = ops;
    this.#hold = hold;
    this.name = hold.name;
    this.token = hold.token;
    this.holdCount = holdCount;
  }

  static {
    holdField = (lease) => lease.#hold;
  }

  /**
   * Aborts, with a `LockLostError` as its reason, when the lock is lost before
   * it is released. Reading it past the lease's deadline reports the loss at
   * once, even when the process was frozen and the deadline timer has not run yet.
   */
  get signal(): AbortSignal {
    this.#checkDeadline();
    return this.#hold.signal;
  }

  /** True until this lease is released or the lock is lost (checked against the deadline on every read). */
  get isHeld(): boolean {
    this.#checkDeadline();
    return !this.#released && !this.#hold.ended;
  }

  /** The lease length renewals and extensions use, in ms. */
  get leaseMs(): number {
    return this.#hold.leaseMs;
  }

  #checkDeadline(): void {
    const hold = this.#hold;
    if (!hold.ended && performance.now() >= hold.deadline) this.#ops.sweepExpired();
  }

  /** @internal */
  markReleased(): boolean {
    if (this.#released) return false;
    this.#released = true;
    return true;
  }

  /** Drops this hold. Throws `LockNotHeldError` if it was released already or the lock was lost. */
  release(): Promise<void> {
    return this.#ops.release(this, this.#hold, true);
  }

  /**
   * Resets the lock's remaining lease to `leaseMs` (default: this lease's length).
   * Throws `LockLostError` if the lock was lost.
   */
  extend(leaseMs?: number): Promise<void> {
    return this.#ops.extend(this.#hold, leaseMs);
  }

  /**
   * Releases unless already released or lost (those were reported through
   * `signal` and the `lost` event), so `await using` never masks an error.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.#ops.release(this, this.#hold, false);
  }
}
