import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockNotHeldError, type LostReason } from '@holdfast/core';
import type { ResolvedAcquireOptions } from '@holdfast/core/internal';
import { acquireLoop, closedOr, firstRound, grantedBy, type LoopContext, type LoopRequest, type WonRound } from './acquire-loop.js';
import type { RedlockAcquiredEvent } from './events.js';
import { RedlockHold } from './hold.js';
import { reenterQuorum } from './hold-ops.js';
import type { HoldBook } from '@holdfast/core/internal';
import { RedlockLease, type RedlockLeaseHost } from './lease.js';
import type { RedlockLock } from './lock.js';
import { checkLease } from './options.js';

/** What an acquisition needs from its Redlock. */
export interface AcquireEnv {
  readonly ctx: LoopContext;
  readonly holds: HoldBook<RedlockHold>;
  readonly leaseHost: RedlockLeaseHost;
  /** Undefined once every instance is ready for a grant (connected, checked, distinct); else a promise of that. */
  readonly ready: () => Promise<void> | undefined;
  readonly isClosed: () => boolean;
  readonly acquired: (event: RedlockAcquiredEvent) => void;
  readonly markLost: (hold: RedlockHold, reason: LostReason) => void;
}

/** A new hold: Redlock rounds until one wins a majority (or `try` gives up). */
export async function acquireNew(
  env: AcquireEnv,
  lock: RedlockLock,
  opts: ResolvedAcquireOptions,
  mode: 'wait' | 'try',
  started: number,
): Promise<RedlockLease | null> {
  const { ctx, holds } = env;
  const ready = env.ready();
  if (ready !== undefined) await ready;
  const renewer = opts.leaseMs === undefined ? holds.renewer : undefined;
  const leaseMs = checkLease(opts.leaseMs ?? renewer?.timeoutMs ?? ctx.options.leaseMs, ctx.options.instanceTimeoutMs);
  const req: LoopRequest = {
    name: lock.name,
    keys: lock.keys,
    leaseMs,
    started,
    deadline: opts.waitMs === undefined ? undefined : started + opts.waitMs,
    signal: opts.signal,
    mode,
  };
  let granted: WonRound | null;
  try {
    const round = await firstRound(ctx, req);
    granted = round.won ? grantedBy(ctx, req, round) : await acquireLoop(ctx, req, round);
  } catch (error) {
    throw closedOr(ctx, error);
  }
  if (!granted) return null;
  const { attempt } = granted;
  const hold = new RedlockHold({
    name: lock.name,
    keys: lock.keys,
    owner: attempt.owner,
    token: granted.token,
    leaseMs,
    deadline: holds.deadlineOf(granted.startedAt, leaseMs),
    autoRenew: renewer !== undefined,
    counts: attempt.counts,
    raised: attempt.raised,
    takenOn: attempt.takenOn,
    granting: attempt.calls,
  });
  attempt.hold = hold;
  if (env.isClosed()) {
    attempt.abandon();
    throw new ClientClosedError();
  }
  holds.add(hold);
  const waitedMs = Math.round(performance.now() - started);
  const { token, count: holdCount } = hold;
  const validityMs = granted.validityMs;
  env.acquired({ name: lock.name, token, holdCount, waitedMs, reentrant: false, validityMs });
  return new RedlockLease(env.leaseHost, hold, holdCount, validityMs);
}

/** One more hold for the owner of an enclosing withLock of the same lock, on a majority. */
export function reenter(
  env: AcquireEnv,
  owner: string,
  lock: RedlockLock,
  leaseMs: number | undefined,
  started: number,
): Promise<RedlockLease> {
  const { holds } = env;
  const hold = holds.all().find((h) => h.owner === owner && h.name === lock.name);
  if (!hold) return Promise.reject(new LockNotHeldError(lock.name, 'the enclosing hold has ended'));
  return hold.serialize(async () => {
    if (hold.ended) throw hold.lostError ?? new LockNotHeldError(lock.name, 'the enclosing hold has ended');
    const ms = Math.max(leaseMs ?? hold.leaseMs, 1);
    const invokedAt = performance.now();
    const outcome = await reenterQuorum(env.ctx, hold, ms);
    if (!outcome.ok) env.markLost(hold, outcome.reason);
    if (hold.ended) throw hold.lostError ?? new LockNotHeldError(lock.name, 'the enclosing hold has ended');
    hold.count++;
    const deadline = holds.deadlineOf(invokedAt, ms);
    if (deadline > hold.deadline) {
      hold.deadline = deadline;
      holds.deadlineMoved(hold);
    }
    const waitedMs = Math.round(performance.now() - started);
    const validityMs = Math.max(0, Math.floor(hold.deadline - performance.now()));
    const { token, count: holdCount } = hold;
    env.acquired({ name: lock.name, token, holdCount, waitedMs, reentrant: true, validityMs });
    return new RedlockLease(env.leaseHost, hold, holdCount, validityMs);
  });
}
