import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockNotHeldError, type ExtendedEvent, type ReleasedEvent } from '@holdfast/core';
import { validate } from '@holdfast/core/internal';
import type { RedlockContext } from './context.js';
import type { RedlockHold } from './hold.js';
import { extendQuorum, releaseQuorum } from './hold-ops.js';
import type { HoldBook } from '@holdfast/core/internal';
import type { RedlockLease } from './lease.js';

/** What release and extend need from their Redlock. */
export interface LeaseEnv {
  readonly ctx: RedlockContext;
  readonly holds: HoldBook<RedlockHold>;
  readonly released: (event: ReleasedEvent) => void;
  readonly extended: (event: ExtendedEvent) => void;
}

/**
 * Drops one hold of a lease, as core's LockClient does, over a quorum.
 * `strict` (release()) reports a lease already released or lost; `await
 * using` does not, those having been reported through the signal and `lost`.
 */
export function releaseLease(
  env: LeaseEnv,
  lease: RedlockLease,
  hold: RedlockHold,
  strict: boolean,
): Promise<void> {
  // Not async: the serialized operation's promise is the result (an async
  // function resolving with it costs a promise and two turns per release).
  if (!lease.markReleased()) return strict ? Promise.reject(notHeld(hold, 'this lease was already released')) : Promise.resolve();
  if (hold.ended) return strict ? Promise.reject(notHeld(hold)) : Promise.resolve();
  return hold.serialize(async () => {
    if (hold.ended) {
      if (strict) throw notHeld(hold);
      return;
    }
    const final = hold.count <= 1;
    // Out of renewal before the release is sent: no renewal may follow it.
    if (final) env.holds.detach(hold);
    let outcome;
    try {
      outcome = await releaseQuorum(env.ctx, hold, final);
    } catch (error) {
      // Unknown outcome: this lease is given up either way, and the final
      // release of the outer lease drops every hold on every instance.
      hold.count--;
      if (final) hold.ended = true;
      throw error;
    }
    if (hold.ended) {
      // Reported lost (or closed) while this release was out: no event may describe it as held after that.
      if (strict) throw notHeld(hold);
      return;
    }
    if (!outcome.ok) {
      env.holds.markLost(hold, outcome.reason);
      if (strict) throw notHeld(hold);
      return;
    }
    hold.count--;
    if (hold.count <= 0) env.holds.end(hold);
    env.released({ name: hold.name, token: hold.token, holdCount: Math.max(0, hold.count) });
  });
}

/** Why a release found its hold not held. Ended by close() (even for a release asked for just before it): ClientClosedError, as in core. */
function notHeld(hold: RedlockHold, detail?: string): Error {
  return detail === undefined && hold.abortReason instanceof ClientClosedError
    ? new ClientClosedError()
    : new LockNotHeldError(hold.name, detail ?? hold.lostError?.message ?? 'already released');
}

/** Resets the remaining lease on a majority; the deadline then runs from when the call was sent. */
export function extendLease(env: LeaseEnv, hold: RedlockHold, leaseMs: number | undefined): Promise<void> {
  let ms: number;
  try {
    ms = leaseMs === undefined ? hold.leaseMs : validate.positiveInteger('leaseMs', leaseMs);
  } catch (error) {
    return Promise.reject(error);
  }
  const gone = () =>
    hold.abortReason instanceof ClientClosedError
      ? new ClientClosedError()
      : (hold.lostError ?? new LockNotHeldError(hold.name, 'already released'));
  return hold.serialize(async () => {
    if (hold.ended) throw gone();
    const invokedAt = performance.now();
    const outcome = await extendQuorum(env.ctx, hold, ms);
    if (!outcome.ok) env.holds.markLost(hold, outcome.reason);
    if (hold.ended) throw gone();
    const deadline = env.holds.deadlineOf(invokedAt, ms);
    // A majority that answered only after the new lease ran out leaves nothing to rely on.
    if (deadline <= performance.now()) {
      env.holds.markLost(hold, 'expired');
      throw gone();
    }
    hold.leaseMs = ms;
    hold.deadline = deadline;
    env.holds.deadlineReset(hold);
    env.extended({ name: hold.name, token: hold.token, leaseMs: ms });
  });
}
