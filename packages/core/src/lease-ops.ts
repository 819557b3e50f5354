import { acquireLoop, send as sendAcquire, type AcquireContext } from './acquire.js';
import { ClientClosedError, LockLostError, LockNotHeldError } from './errors.js';
import type { LostReason } from './errors.js';
import type { AcquiredEvent, ExtendedEvent, ReleasedEvent } from './events.js';
import type { Hold } from './hold.js';
import type { Lease } from './lease.js';
import { driftMarginMs } from './options.js';
import { extendHold, releaseHold } from './release.js';
import * as validate from './validate.js';

/** What the lease operations need from the client that owns the hold. */
export interface HoldHost {
  readonly ctx: AcquireContext;
  readonly driftFactor: number;
  /** Counts the user client's reconnections: a change during a call means it may have been resent. */
  connectionEpoch(): number;
  /** Out of the client's books and out of renewal, state unchanged. */
  detachHold(hold: Hold): void;
  /** Detached and ended. */
  endHold(hold: Hold): void;
  /** The hold's deadline changed. */
  deadlineMoved(hold: Hold): void;
  markLost(hold: Hold, reason: LostReason): void;
  /** Declares lost, now, every hold whose deadline has passed (the deadline timer may not have run yet). */
  sweepExpired(): void;
  /** Emits the event with the payload `build` returns, built only when someone listens. */
  emit(event: 'released', build: () => ReleasedEvent): void;
  emit(event: 'extended', build: () => ExtendedEvent): void;
  emit(event: 'acquired', build: () => AcquiredEvent): void;
  /** A lease object for the hold's current count. */
  newLease(hold: Hold): Lease;
}

/**
 * Why an operation on an ended hold fails: the client was closed
 * (ClientClosedError, like every call after close(), even one asked for
 * just before it and queued behind another), or the lease is not held.
 */
function endedError(hold: Hold): Error {
  if (hold.abortReason instanceof ClientClosedError) return new ClientClosedError();
  return new LockNotHeldError(hold.name, hold.lostError ? hold.lostError.message : 'already released');
}

/**
 * A lease read past its deadline is reported lost (`expired` or
 * `unreachable`) before anything is sent: after an event-loop stall the
 * deadline timer may not have run yet, and Redis would only say "gone".
 */
function settleDeadline(host: HoldHost, hold: Hold): void {
  if (!hold.ended && performance.now() >= hold.deadline) host.sweepExpired();
}

/**
 * Drops one hold of `lease`. `strict` (lease.release()) reports a lease that
 * no longer holds the lock with LockNotHeldError; disposal and withLock do not.
 */
export async function releaseLease(host: HoldHost, lease: Lease, hold: Hold, strict: boolean): Promise<void> {
  if (!lease.markReleased()) {
    if (strict) throw new LockNotHeldError(hold.name, 'this lease was already released');
    return;
  }
  settleDeadline(host, hold);
  if (hold.ended) {
    if (strict) throw endedError(hold);
    return;
  }
  // The section is over from here on. For the last lease, the deadline timer
  // no longer reports a loss (see Hold.releaseRequestedAt) while the release
  // waits behind a confirmation or for a slow reply.
  const requestedAt = performance.now();
  if (hold.count <= 1) hold.releaseRequestedAt = requestedAt;
  return hold.serialize(async () => {
    if (hold.ended) {
      if (strict) throw endedError(hold);
      return;
    }
    const final = hold.count <= 1;
    // A re-entry queued ahead of this release made it an inner one: the hold goes on.
    if (!final) hold.releaseRequestedAt = undefined;
    // Out of renewal before the release is sent: no renewal may follow it.
    if (final) host.detachHold(hold);
    const epoch = host.connectionEpoch();
    const sends = { count: 0 };
    let outcome;
    try {
      // The last lease drops every hold of this owner, whatever Redis counts:
      // a nested release that failed earlier left one more there than here.
      outcome = await releaseHold(host.ctx, hold, { all: final, sends });
    } catch (error) {
      // Unknown outcome: the lease is given up either way. The last one
      // expires by its TTL; an inner one is not counted here any more (it can
      // never be released again), so the last lease still drops them all.
      if (final) hold.ended = true;
      else hold.count--;
      throw error;
    }
    if (hold.ended) {
      // Reported lost (its deadline passed) while this inner release was out:
      // the hold is over, and no event may describe it as held after that.
      if (strict) throw endedError(hold);
      return;
    }
    if (!outcome.ok) {
      // A release resent after a lost reply finds the lock gone, or handed to
      // the next waiter: that is our own release. Handed over means taken by
      // another owner, which only our release can do while our lease runs.
      // Resent by the client on a new connection (the epoch moved), or by us
      // after a timeout, behind the first send on the same connection.
      const resent = final && (sends.count > 1 || epoch !== host.connectionEpoch());
      // Asked for within the lease, answered after it ran out (a slow or
      // frozen server): the key expired, or went to the next owner, after the
      // section had ended. Exclusive throughout: not a loss.
      const now = performance.now();
      const lateAnswer = final && requestedAt < hold.deadline && now >= hold.deadline;
      const ownRelease =
        lateAnswer ||
        (resent && (outcome.reason === 'deleted' || (outcome.reason === 'taken' && now < hold.deadline)));
      if (ownRelease) {
        hold.count = 0;
        hold.ended = true;
      } else {
        host.markLost(hold, outcome.reason);
        if (strict) throw new LockNotHeldError(hold.name, hold.lostError!.message);
        return;
      }
    } else {
      hold.count = outcome.remaining;
      if (hold.count === 0) host.endHold(hold);
    }
    host.emit('released', () => hold.eventPayload({ name: hold.name, token: hold.token, holdCount: hold.count }));
  });
}

/** Resets the remaining lease to `leaseMs` (default: the hold's lease length). */
export async function extendLease(host: HoldHost, hold: Hold, leaseMs: number | undefined): Promise<void> {
  const ms = leaseMs === undefined ? hold.leaseMs : validate.positiveInteger('leaseMs', leaseMs);
  return hold.serialize(async () => {
    settleDeadline(host, hold);
    if (hold.ended) throw hold.abortReason instanceof ClientClosedError ? endedError(hold) : (hold.lostError ?? endedError(hold));
    const invokedAt = performance.now();
    const outcome = await extendHold(host.ctx, hold, ms);
    if (!outcome.ok) {
      host.markLost(hold, outcome.reason);
      throw hold.lostError!;
    }
    hold.leaseMs = ms;
    hold.deadline = invokedAt + ms - driftMarginMs(ms, host.driftFactor);
    host.deadlineMoved(hold);
    host.emit('extended', () => hold.eventPayload({ name: hold.name, token: hold.token, leaseMs: ms }));
  });
}

/** Resolves after the I/O callbacks of this event-loop turn (and the microtasks they queued). */
const afterThisTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Turns a hand-off claim into the full lease, off the caller's path: the
 * lease was returned on the hand-off message, with a deadline at the end of
 * the claim. Queued on the hold at once, so a re-entry or a release waits
 * for it (a confirmation sent after a re-entry would count as another hold);
 * sent only after this turn of the event loop, so building and writing it
 * never delays the start of the caller's section (about 0.1 ms per hand-off
 * on a 2-core machine). Until it lands the lease keeps the claim's deadline.
 */
export function confirmHandoff(host: HoldHost, hold: Hold, requestId: string): void {
  const request = {
    name: hold.name,
    keys: hold.keys,
    owner: hold.owner,
    leaseMs: hold.leaseMs,
    deadline: undefined,
    signal: undefined,
    mode: 'reenter' as const,
    kind: hold.kind,
  };
  hold
    .serialize(async () => {
      await afterThisTurn();
      if (hold.ended) return;
      const invokedAt = performance.now();
      const reply = await sendAcquire(host.ctx, request, requestId, 'reenter');
      if (reply.granted) {
        const deadline = invokedAt + hold.leaseMs - driftMarginMs(hold.leaseMs, host.driftFactor);
        if (deadline > hold.deadline) {
          hold.deadline = deadline;
          host.deadlineMoved(hold);
        }
      } else {
        host.markLost(hold, 'lost' in reply ? reply.lost : 'taken');
      }
    })
    .catch((error: unknown) => host.ctx.onError(error));
}

/**
 * One more hold of a lock this owner holds (a nested withLock): counted in
 * Redis, queued on the hold behind its other operations.
 */
export function reenterHold(host: HoldHost, hold: Hold, leaseMs: number | undefined, started: number): Promise<Lease> {
  return hold.serialize(async () => {
    if (hold.ended) {
      throw hold.abortReason instanceof ClientClosedError
        ? new ClientClosedError()
        : (hold.lostError ?? new LockNotHeldError(hold.name, 'the enclosing hold has ended'));
    }
    const ms = Math.max(leaseMs ?? hold.leaseMs, 1);
    let granted;
    try {
      granted = await acquireLoop(host.ctx, {
        name: hold.name, keys: hold.keys, owner: hold.owner, leaseMs: ms,
        deadline: undefined, signal: undefined, mode: 'reenter', kind: hold.kind,
      });
    } catch (error) {
      if (error instanceof LockLostError) {
        host.markLost(hold, error.reason);
        throw hold.lostError ?? error;
      }
      throw error;
    }
    // Closed, or lost, while the call was out: the hold is not ours to add to.
    if (hold.ended) throw hold.abortReason ?? new LockNotHeldError(hold.name, 'the enclosing hold has ended');
    hold.count = granted!.holdCount;
    const deadline = granted!.invokedAt + ms - driftMarginMs(ms, host.driftFactor);
    if (deadline > hold.deadline) {
      hold.deadline = deadline;
      host.deadlineMoved(hold);
    }
    if (performance.now() >= hold.deadline) {
      // Read after the lease ran out (a stalled event loop): never hand it out.
      host.markLost(hold, 'expired');
      throw hold.lostError!;
    }
    const waitedMs = Math.round(performance.now() - started);
    host.emit('acquired', () =>
      hold.eventPayload({ name: hold.name, token: hold.token, holdCount: hold.count, waitedMs, reentrant: true }),
    );
    return host.newLease(hold);
  });
}
