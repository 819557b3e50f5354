import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockTimeoutError } from '@holdfast/core';
import { randomId, type Waiter, type Waiters } from '@holdfast/core/internal';
import { acquireRound, type RoundRequest, type RoundResult } from './acquire-round.js';
import type { RedlockContext } from './context.js';
import type { QuorumError } from './errors.js';
import { backoffMs } from './quorum.js';
import { dropPendingWakeUps, sleepUntilWoken } from './sleep.js';

export interface LoopContext extends RedlockContext {
  readonly waiters: readonly Waiters[];
  /** `${clientId}:` — every owner id starts with it. */
  readonly ownerPrefix: string;
  readonly closeSignal: AbortSignal;
}

export interface LoopRequest extends RoundRequest {
  /** Monotonic ms the acquisition was asked for (a LockTimeoutError says how long it waited). */
  readonly started: number;
  /** Monotonic ms; undefined waits without limit. */
  readonly deadline: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly mode: 'try' | 'wait';
}

/** A won round: its `attempt` is the hold's grants, its owner the hold's. */
export type WonRound = Extract<RoundResult, { won: true }>;
type LostRound = Extract<RoundResult, { won: false }>;

/**
 * The first round of an acquisition: most win it, so it runs on its own,
 * without the loop's frame; acquireLoop takes over from a lost one.
 */
export function firstRound(ctx: LoopContext, req: LoopRequest): Promise<RoundResult> {
  assertMayRound(ctx, req);
  return acquireRound(ctx, req, ctx.ownerPrefix + randomId(), false);
}

/** Neither close() nor the caller's signal came before a round. */
function assertMayRound(ctx: LoopContext, req: LoopRequest): void {
  if (ctx.closeSignal.aborted) throw new ClientClosedError();
  req.signal?.throwIfAborted();
}

/**
 * A won round, handed out unless close() or the caller's signal came while
 * it was out: its grants are then undone and that is thrown.
 */
export function grantedBy(ctx: LoopContext, req: LoopRequest, round: WonRound): WonRound {
  if (ctx.closeSignal.aborted || req.signal?.aborted) {
    round.attempt.abandon();
    assertMayRound(ctx, req);
  }
  return round;
}

/** An error of a round while close() came: ClientClosedError, as every other call then. */
export function closedOr(ctx: LoopContext, error: unknown): unknown {
  return ctx.closeSignal.aborted && !(error instanceof ClientClosedError) ? new ClientClosedError() : error;
}

/**
 * Rounds after a lost `first` until one wins. Busy: sleep until a release is
 * published on any instance ('f' on the lock's channel), the majority's
 * leases could have run out, or the jittered backoff ends, whichever comes
 * first; the first busy round subscribes and retries at once, so a release
 * in between is not missed. Unreachable or too slow: jittered backoff;
 * without `waitMs`, give up after `retries` such rounds in a row with the
 * last QuorumError. `try` gives up after the first round: null when busy.
 */
export async function acquireLoop(ctx: LoopContext, req: LoopRequest, first: LostRound): Promise<WonRound | null> {
  let waiters: Waiter[] | undefined;
  let leave: (() => void) | undefined;
  let busyRounds = 0;
  let failedRounds = 0;
  let lastError: QuorumError | undefined;
  const timeout = () =>
    new LockTimeoutError(
      req.name,
      Math.round(performance.now() - req.started),
      lastError ? { cause: lastError } : undefined,
    );
  let round: RoundResult = first;
  try {
    for (;;) {
      if (round.won) return grantedBy(ctx, req, round);
      lastError = round.error;
      const busy = round.error.reason === 'busy';
      if (req.mode === 'try') {
        if (busy) return null;
        throw round.error;
      }
      if (req.deadline !== undefined && performance.now() >= req.deadline) throw timeout();
      let sleepMs = 0;
      if (busy) {
        failedRounds = 0;
        // The first busy round subscribes and retries at once.
        if (!waiters) ({ waiters, leave } = await joinAll(ctx, req));
        else sleepMs = Math.min(round.retryAfterMs + 1, backoffMs(busyRounds++, ctx.options.retryDelayMs));
      } else {
        failedRounds++;
        if (req.deadline === undefined && failedRounds > ctx.options.retries) throw round.error;
        sleepMs = backoffMs(failedRounds - 1, ctx.options.retryDelayMs);
      }
      if (sleepMs > 0) {
        const until = Math.min(performance.now() + sleepMs, req.deadline ?? Infinity);
        const woken = await sleepUntilWoken(waiters ?? [], until, [req.signal, ctx.closeSignal]);
        if (ctx.closeSignal.aborted) throw new ClientClosedError();
        // After a split vote every contender is woken by the others' cleanup at
        // once: stagger by up to one round's length, or the same split repeats.
        if (woken && round.split) {
          const jitterUntil = performance.now() + Math.ceil(Math.random() * ctx.options.instanceTimeoutMs);
          await sleepUntilWoken([], Math.min(jitterUntil, req.deadline ?? Infinity), [req.signal, ctx.closeSignal]);
        }
        if (req.deadline !== undefined && performance.now() >= req.deadline) throw timeout();
      }
      assertMayRound(ctx, req);
      if (waiters) dropPendingWakeUps(waiters);
      round = await acquireRound(ctx, req, ctx.ownerPrefix + randomId(), waiters !== undefined);
    }
  } catch (error) {
    throw closedOr(ctx, error);
  } finally {
    leave?.();
  }
}

/**
 * Subscribes to the lock's channel on every instance. Returns once enough
 * instances listen to overlap any majority (a release is published on every
 * instance the holder had), or after `commandTimeoutMs`: a dead instance must
 * not hold the wait up. Subscriptions that complete later still join.
 */
async function joinAll(ctx: LoopContext, req: LoopRequest): Promise<{ waiters: Waiter[]; leave: () => void }> {
  const waiters: Waiter[] = [];
  let left = false;
  const waiterId = randomId();
  const deadline = req.deadline ?? Infinity;
  const needed = ctx.instances.length - ctx.quorum + 1;
  let resolveEnough!: () => void;
  const enough = new Promise<void>((resolve) => (resolveEnough = resolve));
  for (const w of ctx.waiters) {
    w.join(req.keys.channel, waiterId, deadline).then(
      (waiter) => {
        if (left) return waiter.dispose();
        waiters.push(waiter);
        if (waiters.length >= needed) resolveEnough();
      },
      () => undefined, // closed: the loop notices through closeSignal
    );
  }
  const leave = () => {
    left = true;
    for (const waiter of waiters.splice(0)) waiter.dispose();
  };
  const stop = new AbortController();
  const until = Math.min(performance.now() + ctx.options.commandTimeoutMs, deadline);
  const bound = sleepUntilWoken([], until, [req.signal, ctx.closeSignal, stop.signal]);
  try {
    await Promise.race([enough, bound]);
  } catch (error) {
    leave();
    throw error;
  } finally {
    stop.abort();
    bound.catch(() => undefined);
  }
  return { waiters, leave };
}
