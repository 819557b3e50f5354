import {
  ClientClosedError,
  InvalidArgumentError,
  LockLostError,
  type LostEvent,
  type LostReason,
  type Renewer,
} from '@holdfast/core';
import { DeadlineTimer, driftMarginMs } from '@holdfast/core/internal';
import type { RedlockHold } from './hold.js';

/**
 * The holds a Redlock has, their deadlines (one timer for all of them) and
 * the watchdog renewing some: the bookkeeping behind core's RenewalTarget,
 * the same as in core's LockClient.
 */
export class HoldSet {
  readonly #holds = new Set<RedlockHold>();
  readonly #deadlines = new DeadlineTimer<RedlockHold>((hold) =>
    this.markLost(hold, hold.autoRenew && this.renewer ? 'unreachable' : 'expired'),
  );
  readonly #driftFactor: number;
  readonly #onLost: (event: LostEvent, hold: RedlockHold) => void;
  renewer: Renewer | undefined;

  constructor(driftFactor: number, onLost: (event: LostEvent, hold: RedlockHold) => void) {
    this.#driftFactor = driftFactor;
    this.#onLost = onLost;
  }

  get size(): number {
    return this.#holds.size;
  }

  /** Holds still active, as a snapshot. */
  all(): RedlockHold[] {
    return [...this.#holds];
  }

  /** The deadline of a lease set no earlier than `startedAt`. */
  deadlineOf(startedAt: number, leaseMs: number): number {
    return startedAt + leaseMs - driftMarginMs(leaseMs, this.#driftFactor);
  }

  add(hold: RedlockHold): void {
    this.#holds.add(hold);
    this.#deadlines.add(hold);
    if (hold.autoRenew) this.renewer?.watch(hold);
  }

  /** Call after moving a hold's deadline later. */
  deadlineMoved(hold: RedlockHold): void {
    this.#deadlines.update(hold);
  }

  /** Call after setting a hold's deadline to any value (extend may shorten it). */
  deadlineReset(hold: RedlockHold): void {
    this.#deadlines.delete(hold);
    this.#deadlines.add(hold);
  }

  /** No longer counted, timed or renewed (a final release is under way). */
  detach(hold: RedlockHold): void {
    this.#holds.delete(hold);
    this.#deadlines.delete(hold);
    if (hold.autoRenew) this.renewer?.unwatch(hold);
  }

  end(hold: RedlockHold): void {
    hold.ended = true;
    this.detach(hold);
  }

  attach(renewer: Renewer): void {
    if (this.renewer && this.renewer !== renewer) {
      throw new InvalidArgumentError('This Redlock already has a watchdog; stop it first');
    }
    this.renewer = renewer;
  }

  detachRenewer(renewer: Renewer): void {
    if (this.renewer === renewer) this.renewer = undefined;
  }

  confirmRenewal(hold: RedlockHold, startedAt: number): void {
    if (hold.ended) return;
    hold.deadline = Math.max(hold.deadline, this.deadlineOf(startedAt, hold.leaseMs));
    this.#deadlines.update(hold);
  }

  markLost(hold: RedlockHold, reason: LostReason, cause?: unknown): void {
    if (hold.ended) return;
    this.end(hold);
    const error = new LockLostError(hold.name, hold.token, reason, cause === undefined ? undefined : { cause });
    hold.lostError = error;
    hold.abort(error);
    this.#onLost({ name: hold.name, token: hold.token, reason, error }, hold);
    if (hold.autoRenew) this.renewer?.lost(hold, error);
  }

  sweepExpired(): void {
    this.#deadlines.sweep();
  }

  /**
   * close(): every hold still held ends, reported like a loss (reason
   * `closed`) with ClientClosedError as its signal's reason. Their locks stay
   * on the instances until their TTL unless the caller releases them.
   */
  closeAll(): void {
    const holds = this.all();
    this.renewer?.targetClosed();
    this.renewer = undefined;
    for (const hold of holds) {
      if (hold.ended) continue;
      this.end(hold);
      const closed = new ClientClosedError();
      const error = new LockLostError(hold.name, hold.token, 'closed', { cause: closed });
      hold.lostError = error;
      hold.abort(closed);
      this.#onLost({ name: hold.name, token: hold.token, reason: 'closed', error }, hold);
    }
    this.#deadlines.clear();
    this.#holds.clear();
  }
}
