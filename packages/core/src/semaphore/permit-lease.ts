import type { Hold } from '../engine/hold.js';
import { Lease, type LeaseOps } from '../lease/lease.js';

/**
 * Permits of a semaphore, held until released or until the lease runs out.
 * Every acquisition is its own lease (semaphores are not reentrant):
 * `holdCount` is always 1, and `token` is strictly greater than every token
 * issued before for this semaphore's name.
 *
 * @hideconstructor
 */
export class PermitLease extends Lease {
  /** How many permits this lease holds. */
  readonly permits: number;

  /** @internal */
  constructor(ops: LeaseOps, hold: Hold, permits: number) {
    super(ops, hold, 1);
    this.permits = permits;
  }
}
