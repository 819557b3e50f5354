import { callRedis, type LockKeys } from '@holdfast/core/internal';
import { forceReleaseOn, inspectOn } from './calls.js';
import type { RedlockContext } from './context.js';
import { QuorumError } from './errors.js';
import { fanOut } from './fan-out.js';
import { failedCalls, tally } from './quorum.js';

export interface LockState {
  readonly locked: boolean;
  readonly remainingMs: number;
  readonly token: number | null;
}

/** A read or admin call on every instance: off the quorum path, so bounded by `commandTimeoutMs` and retried. */
function everywhere<R>(
  ctx: RedlockContext,
  call: (i: number) => Promise<R>,
  decided: (values: readonly (R | undefined)[]) => boolean = () => false,
) {
  const { commandTimeoutMs, retries } = ctx.options;
  const values: (R | undefined)[] = ctx.instances.map(() => undefined);
  const send = (i: number) =>
    callRedis(() => call(i), { commandTimeoutMs, retries }).then((value) => (values[i] = value));
  return fanOut(ctx.instances.length, send, {
    timeoutMs: commandTimeoutMs,
    classify: (instance) => ({ instance, status: 'ok' }),
    decided: () => decided(values),
  });
}

/**
 * The lock as a majority sees it: locked when a majority has the key; the
 * time until fewer than a majority will; the largest token among them.
 */
export async function inspectLock(ctx: RedlockContext, name: string, keys: LockKeys): Promise<LockState> {
  const { quorum } = ctx;
  // Settled once a majority agrees either way; more answers would only refine the token.
  const settledState = (values: readonly ({ pttl: number } | undefined)[]) => {
    const known = values.filter((v) => v !== undefined);
    const live = known.filter((v) => v.pttl !== -2).length;
    return live >= quorum || known.length - live > ctx.instances.length - quorum;
  };
  const { answers, outcomes } = await everywhere(ctx, (i) => inspectOn(ctx, i, keys), settledState);
  if (tally(outcomes).yes < quorum) {
    throw new QuorumError({ lockName: name, operation: 'inspect', reason: failedCalls(outcomes), quorum, outcomes });
  }
  const live = answers.flatMap((a) => (a.state === 'ok' && a.value.pttl !== -2 ? [a.value] : []));
  if (live.length < quorum) return { locked: false, remainingMs: 0, token: null };
  const remaining = live.map((s) => Math.max(0, s.pttl)).sort((a, b) => b - a);
  return {
    locked: true,
    remainingMs: remaining[quorum - 1] ?? 0,
    token: Math.max(...live.map((s) => s.token)),
  };
}

/** Deletes the lock on every instance, whoever holds it; true when any key was removed. */
export async function forceReleaseLock(ctx: RedlockContext, name: string, keys: LockKeys): Promise<boolean> {
  const { quorum } = ctx;
  const { answers, outcomes } = await everywhere(ctx, (i) => forceReleaseOn(ctx, i, keys));
  if (tally(outcomes).yes < quorum) {
    throw new QuorumError({ lockName: name, operation: 'force-release', reason: failedCalls(outcomes), quorum, outcomes });
  }
  return answers.some((a) => a.state === 'ok' && a.value);
}
