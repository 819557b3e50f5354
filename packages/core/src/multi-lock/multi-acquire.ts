import { performance } from 'node:perf_hooks';
import type { AcquireContext } from '../engine/kind.js';
import { ClientClosedError, KeyConflictError, LockTimeoutError } from '../errors/errors.js';
import type { LockKeys } from '../keys/keys.js';
import { MUTEX, lockFragments } from '../mutex/mutex-calls.js';
import { randomId } from '../engine/owner.js';
import { withTimeout } from '../port/redis-call.js';
import { multiAcquireReply, type MultiAcquireReply } from '../scripts/replies.js';
import { callGranting, defineScript } from '../scripts/index.js';
import multiAcquireSource from './multi-acquire.lua';
import type { Waiter } from '../engine/waiter.js';
import { cleanupWaitMs, waitFailure } from '../engine/acquire-loop.js';

/** Takes every lock of one hash slot at once, or none (see multi-acquire.lua). */
export const multiAcquireScript = defineScript('multi-acquire', multiAcquireSource, lockFragments);

/** Several locks of one hash slot, taken by one script call (multi-acquire.lua). */
export interface GroupRequest {
  readonly names: readonly string[];
  /** One per name; every one in the same hash slot. */
  readonly keys: readonly LockKeys[];
  readonly owner: string;
  readonly leaseMs: number;
  /** Monotonic ms; undefined waits without limit. */
  readonly deadline: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly mode: 'try' | 'wait';
  /** When the caller's wait began (monotonic ms): a LockTimeoutError reports the time waited since. */
  readonly started: number;
}

export interface GroupGranted {
  /** Token and hold count per name, in the request's order. */
  readonly parts: readonly { readonly token: number; readonly holdCount: number }[];
  /** Monotonic time the successful call was sent: the leases run from no earlier than this. */
  readonly invokedAt: number;
  /** The request id of every attempt of this call (what `cancel` undoes, per part). */
  readonly requestId: string;
}

function sendGroup(ctx: AcquireContext, req: GroupRequest, requestId: string, mode: 'try' | 'join'): Promise<MultiAcquireReply> {
  const keys = [req.keys[0]!.fence];
  for (const k of req.keys) keys.push(k.lock, k.queue, k.waiters);
  const args: (string | number)[] = [req.owner, req.leaseMs, requestId, mode, ctx.handoffTimeoutMs, ctx.handoffTimeoutMs];
  for (const k of req.keys) args.push(k.channel);
  return callGranting(ctx, multiAcquireScript, keys, args, {
    name: req.names[0],
    decode: (reply) => multiAcquireReply(reply, req.keys.length),
    granted: (decoded) => decoded.granted,
    limits: { deadline: req.deadline, signal: req.signal },
  });
}

/** Undoes, on every part, what this request may have left (queue entry, grant); bounded, never rejects. */
export function cancelGroup(ctx: AcquireContext, req: GroupRequest, requestId: string): Promise<unknown> {
  return Promise.all(
    req.keys.map((keys) => withTimeout(ctx.cancel(keys, req.owner, requestId, MUTEX), ctx.policy.commandTimeoutMs).catch(() => undefined)),
  );
}

/**
 * The acquire loop of a same-slot group. One request id serves every attempt,
 * so a resend after a lost reply is recognised part by part and never counts
 * twice. Busy: queue on the first busy part (the script does, in 'join' mode)
 * and sleep on that part's channel until a hand-off or a release wakes it,
 * bounded by the holder's lease; then try the whole group again. A part handed
 * over while others are busy goes back at once (all or none per group), so a
 * hand-off message is never a grant here: every grant comes from a script reply.
 */
export async function acquireGroup(ctx: AcquireContext, req: GroupRequest): Promise<GroupGranted | undefined> {
  const requestId = randomId();
  const { started } = req;
  let mode: 'try' | 'join' = 'try';
  let waiter: Waiter | undefined;
  let waiterChannel: string | undefined;
  let sent = false;
  // The part a reached deadline is reported on: the error is made once the clean-up was sent, with the time waited then.
  let timedOutPart: number | undefined;
  const timeout = (part: number) => {
    timedOutPart = part;
    return new Error('the wait reached its deadline');
  };
  try {
    for (;;) {
      if (ctx.isClosed()) throw new ClientClosedError();
      req.signal?.throwIfAborted();
      const invokedAt = performance.now();
      sent = true;
      const reply = await sendGroup(ctx, req, requestId, mode);
      if (reply.granted) return { parts: reply.parts, invokedAt, requestId };
      if ('conflictPart' in reply) throw new KeyConflictError(req.names[reply.conflictPart]!);
      if (req.mode === 'try') return undefined;
      if (req.deadline !== undefined && performance.now() >= req.deadline) throw timeout(reply.busyPart);
      const channel = req.keys[reply.busyPart]!.channel;
      if (waiterChannel !== channel) {
        // Listen on the busy part's channel before the attempt that queues
        // there: a hand-off right after it must find this waiter.
        waiter?.dispose();
        waiter = undefined;
        waiter = await ctx.waiters.join(channel, requestId, req.deadline ?? Infinity, false, req.signal);
        waiterChannel = channel;
        mode = 'join';
        continue;
      }
      // Not subscribed (spinning, a failed subscribe, a reconnecting
      // subscriber): look again soon rather than sleep out the holder's lease.
      await waiter!.sleep(performance.now() + waiter!.lookAgainIn(reply.retryAfterMs) + 1, req.signal);
      // A hand-off names a part now held for this request: the next attempt uses it.
      waiter!.takeHandoff();
      if (req.deadline !== undefined && performance.now() >= req.deadline) throw timeout(reply.busyPart);
    }
  } catch (error) {
    if (sent) {
      // As for a single lock (acquire-loop.ts, `failed`): sent before the rejection, awaited only while the caller's wait allows.
      const cleanup = cancelGroup(ctx, req, requestId);
      const waitMs = cleanupWaitMs(ctx, req.deadline, req.signal);
      if (waitMs > 0) await withTimeout(cleanup, waitMs).catch(() => undefined);
    }
    if (timedOutPart !== undefined && !ctx.isClosed()) throw new LockTimeoutError(req.names[timedOutPart]!, Math.round(performance.now() - started));
    throw waitFailure(error, req.names[0]!, started, req.deadline, ctx.isClosed());
  } finally {
    waiter?.dispose();
  }
}
