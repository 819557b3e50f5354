import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockTimeoutError } from '@holdfast/core';
import { randomId, type LockKeys, type Waiter, type Waiters } from '@holdfast/core/internal';
import { acquireRound, type Attempt } from './acquire-round.js';
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

export interface LoopRequest {
  readonly name: string;
  readonly keys: LockKeys;
  readonly leaseMs: number;
  /** Monotonic ms; undefined waits without limit. */
  readonly deadline: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly mode: 'try' | 'wait';
}

export interface LoopGranted {
  readonly owner: string;
  readonly token: number;
  readonly validityMs: number;
  readonly startedAt: number;
  readonly attempt: Attempt;
}

/**
 * Rounds until one wins. Busy: sleep until a release is published on any
 * instance ('f' on the lock's channel), the majority's leases could have run
 * out, or the jittered backoff ends, whichever comes first; the first busy
 * round subscribes and retries at once, so a release in between is not missed.
 * Unreachable or too slow: jittered backoff; without `waitMs`, give up after
 * `retries` such rounds in a row with the last QuorumError.
 */
export async function acquireLoop(ctx: LoopContext, req: LoopRequest): Promise<LoopGranted | null> {
  const started = performance.now();
  let waiters: Waiter[] | undefined;
  let leave: (() => void) | undefined;
  let busyRounds = 0;
  let failedRounds = 0;
  let lastError: QuorumError | undefined;
  const timeout = () =>
    new LockTimeoutError(
      req.name,
      Math.round(performance.now() - started),
      lastError ? { cause: lastError } : undefined,
    );
  try {
    for (;;) {
      if (ctx.closeSignal.aborted) throw new ClientClosedError();
      req.signal?.throwIfAborted();
      if (waiters) dropPendingWakeUps(waiters);
      const owner = ctx.ownerPrefix + randomId();
      const round = await acquireRound(ctx, { name: req.name, keys: req.keys, owner, leaseMs: req.leaseMs, watching: waiters !== undefined });
      if (round.won) {
        if (ctx.closeSignal.aborted || req.signal?.aborted) {
          round.attempt.abandon();
          if (ctx.closeSignal.aborted) throw new ClientClosedError();
          req.signal!.throwIfAborted();
        }
        return {
          owner,
          token: round.token,
          validityMs: round.validityMs,
          startedAt: round.startedAt,
          attempt: round.attempt,
        };
      }
      lastError = round.error;
      const busy = round.error.reason === 'busy';
      if (req.mode === 'try') {
        if (busy) return null;
        throw round.error;
      }
      if (req.deadline !== undefined && performance.now() >= req.deadline) throw timeout();
      let sleepMs: number;
      if (busy) {
        failedRounds = 0;
        if (!waiters) {
          ({ waiters, leave } = await joinAll(ctx, req));
          continue;
        }
        sleepMs = Math.min(round.retryAfterMs + 1, backoffMs(busyRounds++, ctx.options.retryDelayMs));
      } else {
        failedRounds++;
        if (req.deadline === undefined && failedRounds > ctx.options.retries) throw round.error;
        sleepMs = backoffMs(failedRounds - 1, ctx.options.retryDelayMs);
      }
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
  } catch (error) {
    if (ctx.closeSignal.aborted && !(error instanceof ClientClosedError)) throw new ClientClosedError();
    throw error;
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
