import { performance } from 'node:perf_hooks';
import { ClientClosedError, InvalidArgumentError, LockLostError, type LostReason } from '../errors/errors.js';
import { driftMarginMs } from '../options/options.js';
import type { Renewer } from '../options/renewal.js';
import type { Hold } from './hold.js';

/** What the owner of a book does when one of its holds ends without a release (after the hold is ended and its signal aborted). */
export type OnHoldLost<H extends Hold> = (hold: H, reason: LostReason, error: LockLostError) => void;

/**
 * The live holds of one client (a `LockClient`'s engine, a Redlock): their
 * deadlines on one timer, the watchdog renewing some, and how a hold ends —
 * lost (its deadline passed, Redis said it is gone) or closed. The same
 * bookkeeping wherever the holds are taken; the owner reports a loss
 * (`onLost`: events, telemetry, clean-up).
 */
export class HoldBook<H extends Hold = Hold> {
  readonly #holds = new Set<H>();
  readonly #deadlines = new DeadlineTimer<H>((hold) => {
    // The last lease's release was asked for within the lease: the section is
    // over, and that release reports how it ended.
    if (hold.releaseRequestedAt !== undefined && hold.releaseRequestedAt < hold.deadline) return;
    this.markLost(hold, hold.autoRenew && this.renewer ? 'unreachable' : 'expired');
  });
  readonly #driftFactor: number;
  readonly #onLost: OnHoldLost<H>;
  /** What the "already has a watchdog" error calls the owner ("client", "Redlock"). */
  readonly #ownerLabel: string;
  #renewer: Renewer | undefined;

  constructor(driftFactor: number, ownerLabel: string, onLost: OnHoldLost<H>) {
    this.#driftFactor = driftFactor;
    this.#ownerLabel = ownerLabel;
    this.#onLost = onLost;
  }

  /** Holds in the book now. */
  get size(): number {
    return this.#holds.size;
  }

  /** The attached watchdog, if any. */
  get renewer(): Renewer | undefined {
    return this.#renewer;
  }

  /** The holds, as a snapshot. */
  all(): H[] {
    return [...this.#holds];
  }

  /** The live hold of `owner` on the lock `name`, if any. */
  find(owner: string, name: string): H | undefined {
    for (const hold of this.#holds) if (hold.owner === owner && hold.name === name) return hold;
    return undefined;
  }

  /** The deadline of a lease of `leaseMs` set no earlier than `startedAt`: less the drift margin. */
  deadlineOf(startedAt: number, leaseMs: number): number {
    return startedAt + leaseMs - driftMarginMs(leaseMs, this.#driftFactor);
  }

  /** Takes a new hold in: deadline timer, close(), and the watchdog when it renews the hold. */
  add(hold: H, renewer: Renewer | undefined = this.#renewer): void {
    this.#holds.add(hold);
    this.#deadlines.add(hold);
    if (hold.autoRenew) renewer?.watch(hold);
  }

  /** Call after moving a hold's deadline later. */
  deadlineMoved(hold: H): void {
    this.#deadlines.update(hold);
  }

  /** Call after setting a hold's deadline to any value (an extend may shorten it). */
  deadlineReset(hold: H): void {
    this.#deadlines.delete(hold);
    this.#deadlines.add(hold);
  }

  /** Out of the book and out of renewal, state unchanged (a final release is under way). */
  detach(hold: H): void {
    this.#holds.delete(hold);
    this.#deadlines.delete(hold);
    if (hold.autoRenew) this.#renewer?.unwatch(hold);
  }

  /** Detached and ended. */
  end(hold: H): void {
    hold.ended = true;
    this.detach(hold);
  }

  /** Declares lost, now, every hold whose deadline has passed (the timer may not have run yet after a stall). */
  sweepExpired(): void {
    this.#deadlines.sweep();
  }

  attach(renewer: Renewer): void {
    if (this.#renewer && this.#renewer !== renewer) {
      throw new InvalidArgumentError(`This ${this.#ownerLabel} already has a watchdog; stop it first`);
    }
    this.#renewer = renewer;
  }

  detachRenewer(renewer: Renewer): void {
    if (this.#renewer === renewer) this.#renewer = undefined;
  }

  /** A renewal sent at `startedAt` succeeded: the deadline moves to its end (never earlier). */
  confirmRenewal(hold: H, startedAt: number): void {
    if (hold.ended) return;
    hold.deadline = Math.max(hold.deadline, this.deadlineOf(startedAt, hold.leaseMs));
    this.#deadlines.update(hold);
  }

  /** Ends the hold as lost: its signal aborts with the LockLostError, the owner reports it, the watchdog is told. */
  markLost(hold: H, reason: LostReason, cause?: unknown): void {
    if (hold.ended) return;
    this.end(hold);
    const error = new LockLostError(hold.name, hold.token, reason, cause === undefined ? undefined : { cause });
    hold.lostError = error;
    hold.abort(error);
    this.#onLost(hold, reason, error);
    if (hold.autoRenew) this.#renewer?.lost(hold, error);
  }

  /**
   * close(): every hold ends, reported like a loss (reason `closed`) with a
   * ClientClosedError as its signal's reason, and the watchdog lets go of
   * this owner. Returns the holds that were live (their locks stay in Redis
   * until their TTL unless the caller releases them).
   */
  closeAll(): H[] {
    const holds = this.all();
    for (const hold of holds) {
      if (hold.ended) continue;
      this.end(hold);
      const closed = new ClientClosedError();
      const error = new LockLostError(hold.name, hold.token, 'closed', { cause: closed });
      hold.lostError = error;
      hold.abort(closed);
      this.#onLost(hold, 'closed', error);
    }
    this.#renewer?.targetClosed();
    this.#renewer = undefined;
    this.#deadlines.clear();
    this.#holds.clear();
    return holds;
  }
}

/** What the timer needs of an entry: its deadline (monotonic ms). */
interface Deadlined {
  readonly deadline: number;
}

/**
 * One timer for every lease deadline of a client. A deadline that moves later
 * (renewal, extend) leaves the timer as it is: it fires at the earliest
 * deadline it was armed for, rescans, and re-arms. Only an earlier deadline
 * re-arms at once. The last entry leaving leaves the timer (unref'd) armed
 * too. `clear()` (the client's close()) drops it.
 */
class DeadlineTimer<T extends Deadlined> {
  readonly #entries = new Set<T>();
  readonly #onExpired: (entry: T) => void;
  #timer: NodeJS.Timeout | undefined;
  #armedFor = Infinity;

  constructor(onExpired: (entry: T) => void) {
    this.#onExpired = onExpired;
  }

  get size(): number {
    return this.#entries.size;
  }

  add(entry: T): void {
    this.#entries.add(entry);
    this.#arm(entry.deadline);
  }

  /** Call after an entry's deadline changed. */
  update(entry: T): void {
    // Renewals call this for every lease on every tick: a deadline moved later
    // than the armed one (the usual case) returns on one comparison.
    if (entry.deadline >= this.#armedFor || !this.#entries.has(entry)) return;
    this.#arm(entry.deadline);
  }

  delete(entry: T): void {
    // The timer stays: it finds nothing due when it fires, or the next entry's deadline.
    this.#entries.delete(entry);
  }

  clear(): void {
    this.#entries.clear();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
  }

  /** Expires, synchronously, every entry whose deadline is at or before `now`. */
  sweep(now = performance.now()): void {
    let next = Infinity;
    // Deleting the entry being visited is safe while iterating a (Pinned)Set; an entry
    // added by onExpired is visited too, and re-arms the timer itself.
    for (const entry of this.#entries) {
      if (entry.deadline <= now) {
        this.#entries.delete(entry);
        this.#onExpired(entry);
      } else {
        next = Math.min(next, entry.deadline);
      }
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedFor = Infinity;
    if (next !== Infinity) this.#arm(next);
  }

  #arm(deadline: number): void {
    if (deadline >= this.#armedFor) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedFor = deadline;
    this.#timer = setTimeout(() => this.sweep(), Math.max(0, Math.ceil(deadline - performance.now())));
    this.#timer.unref();
  }
}
