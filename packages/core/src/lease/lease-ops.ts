import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockLostError, LockNotHeldError } from '../errors/errors.js';
import { acquireLoop } from '../engine/acquire-loop.js';
import type { Engine } from '../engine/engine.js';
import type { Hold } from '../engine/hold.js';
import { extendHold, releaseHold } from '../engine/release.js';
import type { ReleaseReply } from '../scripts/replies.js';
import * as validate from '../options/validate.js';
import { traceExtend, traceRelease } from '../telemetry/telemetry.js';
import type { LeaseOps } from './lease.js';

/** What a release needs of the lease it drops (a `Lease`): that it is dropped once. */
export interface ReleasedOnce {
  readonly token: number;
  markReleased(): boolean;
}

/** The engine's lease operations, made once per engine (see `LeaseOps`). */
const opsByEngine = new WeakMap<Engine, LeaseOps>();

/** The `LeaseOps` every lease of `engine` runs its release and extend through. */
export function engineLeaseOps(engine: Engine): LeaseOps {
  let ops = opsByEngine.get(engine);
  if (!ops) {
    ops = {
      release: (lease, hold, strict) => (strict ? releaseTraced(engine, lease, hold) : disposeTraced(engine, lease, hold)),
      extend: (hold, leaseMs) => extendTraced(engine, hold, leaseMs),
      sweepExpired: () => engine.holds.sweepExpired(),
    };
    opsByEngine.set(engine, ops);
  }
  return ops;
}

/** `lease.release()`: traced, and refused once the client is closed. */
export function releaseTraced(engine: Engine, lease: ReleasedOnce, hold: Hold): Promise<void> {
  if (engine.isClosed()) return Promise.reject(new ClientClosedError());
  return traceRelease(engine.clientId, hold, lease.token, () => releaseLease(engine, lease, hold, true));
}

/** Disposal and the end of withLock: lenient (a lease released or lost already is not an error), traced. */
export function disposeTraced(engine: Engine, lease: ReleasedOnce, hold: Hold): Promise<void> {
  return traceRelease(engine.clientId, hold, lease.token, () => releaseLease(engine, lease, hold, false));
}

/** `lease.extend()`: traced, and refused once the client is closed. */
export function extendTraced(engine: Engine, hold: Hold, leaseMs: number | undefined): Promise<void> {
  if (engine.isClosed()) return Promise.reject(new ClientClosedError());
  return traceExtend(engine.clientId, hold, leaseMs, () => extendLease(engine, hold, leaseMs));
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
function settleDeadline(engine: Engine, hold: Hold, now = performance.now()): void {
  if (!hold.ended && now >= hold.deadline) engine.holds.sweepExpired();
}

/**
 * Drops one hold of `lease`. `strict` (lease.release()) reports a lease that
 * no longer holds the lock with LockNotHeldError; disposal and withLock do not.
 */
export function releaseLease(engine: Engine, lease: ReleasedOnce, hold: Hold, strict: boolean): Promise<void> {
  if (!lease.markReleased()) {
    return strict ? Promise.reject(new LockNotHeldError(hold.name, 'this lease was already released')) : Promise.resolve();
  }
  // One clock read serves both: the lease's deadline, and when the release was asked for.
  const requestedAt = performance.now();
  try {
    settleDeadline(engine, hold, requestedAt);
  } catch (error) {
    return Promise.reject(error);
  }
  if (hold.ended) return strict ? Promise.reject(endedError(hold)) : Promise.resolve();
  // The section is over from here on. For the last lease, the deadline timer
  // no longer reports a loss (see Hold.releaseRequestedAt) while the release
  // waits behind a confirmation or for a slow reply.
  if (hold.count <= 1) hold.releaseRequestedAt = requestedAt;
  return hold.serialize(() => releaseQueuedLease(engine, hold, strict, requestedAt));
}

/** The release itself, queued on the hold behind its other operations; the hold is settled here, from the outcome. */
function releaseQueuedLease(engine: Engine, hold: Hold, strict: boolean, requestedAt: number): Promise<void> {
  if (hold.ended) return strict ? Promise.reject(endedError(hold)) : Promise.resolve();
  const final = hold.count <= 1;
  // A re-entry queued ahead of this release made it an inner one: the hold goes on.
  if (!final) hold.releaseRequestedAt = undefined;
  // Out of renewal before the release is sent: no renewal may follow it.
  if (final) engine.holds.detach(hold);
  const epoch = engine.connectionEpoch();
  // The last lease drops every hold of this owner, whatever Redis counts:
  // a nested release that failed earlier left one more there than here.
  return releaseHold(engine, hold, final).then(
    ({ reply, resent }) => settleRelease(engine, hold, strict, requestedAt, final, reply, resent || epoch !== engine.connectionEpoch()),
    (error: unknown) => {
      // Unknown outcome: the lease is given up either way. The last one
      // expires by its TTL; an inner one is not counted here any more (it can
      // never be released again), so the last lease still drops them all.
      if (final) hold.ended = true;
      else hold.count--;
      throw error;
    },
  );
}

/**
 * What a release's reply means for the hold. `resent`: the release was sent
 * more than once, by the client on a new connection or by us after a timeout.
 */
function settleRelease(engine: Engine, hold: Hold, strict: boolean, requestedAt: number, final: boolean, outcome: ReleaseReply, resent: boolean): void {
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
    // Asked for within the lease, answered after it ran out (a slow or
    // frozen server): the key expired, or went to the next owner, after the
    // section had ended. Exclusive throughout: not a loss.
    const now = performance.now();
    const lateAnswer = final && requestedAt < hold.deadline && now >= hold.deadline;
    const ownRelease =
      lateAnswer ||
      (final && resent && (outcome.reason === 'deleted' || (outcome.reason === 'taken' && now < hold.deadline)));
    if (ownRelease) {
      hold.count = 0;
      hold.ended = true;
    } else {
      engine.holds.markLost(hold, outcome.reason);
      if (strict) throw new LockNotHeldError(hold.name, hold.lostError!.message);
      return;
    }
  } else {
    hold.count = outcome.remaining;
    if (hold.count === 0) engine.holds.end(hold);
  }
  engine.emitLazily('released', () => hold.eventPayload({ name: hold.name, token: hold.token, holdCount: hold.count }));
}

/** Resets the remaining lease to `leaseMs` (default: the hold's lease length). */
export function extendLease(engine: Engine, hold: Hold, leaseMs: number | undefined): Promise<void> {
  let ms: number;
  try {
    ms = leaseMs === undefined ? hold.leaseMs : validate.positiveInteger('leaseMs', leaseMs);
  } catch (error) {
    return Promise.reject(error);
  }
  return hold.serialize(async () => {
    settleDeadline(engine, hold);
    if (hold.ended) throw hold.abortReason instanceof ClientClosedError ? endedError(hold) : (hold.lostError ?? endedError(hold));
    const invokedAt = performance.now();
    const outcome = await extendHold(engine, hold, ms);
    if (!outcome.ok) {
      engine.holds.markLost(hold, outcome.reason);
      throw hold.lostError!;
    }
    hold.leaseMs = ms;
    hold.deadline = invokedAt + ms - engine.marginMs(ms);
    engine.holds.deadlineMoved(hold);
    engine.emitLazily('extended', () => hold.eventPayload({ name: hold.name, token: hold.token, leaseMs: ms }));
  });
}

/**
 * One more hold of a lock this owner holds (a nested withLock): counted in
 * Redis, queued on the hold behind its other operations. Resolves to the
 * hold count it made (the new lease's `holdCount`).
 */
export function reenterHold(engine: Engine, hold: Hold, leaseMs: number | undefined, started: number): Promise<number> {
  return hold.serialize(async () => {
    if (hold.ended) {
      throw hold.abortReason instanceof ClientClosedError
        ? new ClientClosedError()
        : (hold.lostError ?? new LockNotHeldError(hold.name, 'the enclosing hold has ended'));
    }
    const ms = Math.max(leaseMs ?? hold.leaseMs, 1);
    let granted;
    try {
      granted = await acquireLoop(engine, {
        name: hold.name, keys: hold.keys, owner: hold.owner, leaseMs: ms,
        deadline: undefined, signal: undefined, mode: 'reenter', kind: hold.kind,
      });
    } catch (error) {
      if (error instanceof LockLostError) {
        engine.holds.markLost(hold, error.reason);
        throw hold.lostError ?? error;
      }
      throw error;
    }
    // Closed, or lost, while the call was out: the hold is not ours to add to.
    if (hold.ended) throw hold.abortReason ?? new LockNotHeldError(hold.name, 'the enclosing hold has ended');
    hold.count = granted!.holdCount;
    const deadline = granted!.invokedAt + ms - engine.marginMs(ms);
    if (deadline > hold.deadline) {
      hold.deadline = deadline;
      engine.holds.deadlineMoved(hold);
    }
    if (performance.now() >= hold.deadline) {
      // Read after the lease ran out (a stalled event loop): never hand it out.
      engine.holds.markLost(hold, 'expired');
      throw hold.lostError!;
    }
    const waitedMs = Math.round(performance.now() - started);
    engine.emitLazily('acquired', () =>
      hold.eventPayload({ name: hold.name, token: hold.token, holdCount: hold.count, waitedMs, reentrant: true }),
    );
    // The count this re-entry made, read inside the queued operation: the next one may change it.
    return hold.count;
  });
}
