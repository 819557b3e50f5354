import { performance } from 'node:perf_hooks';
import { ClientClosedError, KeyConflictError, LockLostError, LockTimeoutError, ReplicationError, isHoldfastError } from '../errors/errors.js';
import { conflictKind, type AcquireContext, type AcquireRequest } from './kind.js';
import { randomId } from './owner.js';
import { withTimeout } from '../port/redis-call.js';
import type { AcquireReply } from '../scripts/replies.js';
import type { Waiter } from './waiter.js';

export interface Granted {
  readonly token: number;
  readonly holdCount: number;
  /** Monotonic time the successful call was sent: the lease runs from no earlier than this. */
  readonly invokedAt: number;
  /** The request id of every attempt of this call (what `cancel` undoes). */
  readonly requestId: string;
  /**
   * Set when the lock came by a hand-off message: Redis holds it for this
   * caller for at least `claimMs` from `invokedAt` until `confirm` (sent
   * with `requestId`) extends it to the full lease.
   */
  readonly claim?: { readonly claimMs: number; readonly requestId: string } | undefined;
  /** What the kind's acquire call left for its release (`AcquireReply.releaseHint`). */
  readonly releaseHint?: string | undefined;
}

/** One attempt of `mode`, through the kind's calls. */
export function send(ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string): Promise<AcquireReply> {
  return req.kind.calls.acquire(ctx, req, requestId, mode);
}

/** A busy reply. */
type BusyReply = Extract<AcquireReply, { readonly retryAfterMs: number }>;

/** True for a busy reply the loop waits on (a 'try' ends with it instead). */
function waitsOn(req: AcquireRequest, reply: AcquireReply): reply is BusyReply {
  return !reply.granted && 'retryAfterMs' in reply && req.mode !== 'try';
}

/**
 * What any other reply ends the loop with: the grant, or undefined for a
 * 'try' found busy. A loss or a conflict throws.
 */
function outcomeOf(req: AcquireRequest, reply: AcquireReply, requestId: string, invokedAt: number): Granted | undefined {
  if (reply.granted) {
    return { token: reply.token, holdCount: reply.holdCount, invokedAt, requestId, releaseHint: reply.releaseHint };
  }
  if ('lost' in reply) throw new LockLostError(req.name, 0, reply.lost);
  if ('conflict' in reply) {
    throw req.mode === 'reenter' ? new LockLostError(req.name, 0, 'taken') : new KeyConflictError(req.name, conflictKind(req.kind));
  }
  return undefined;
}

/**
 * The acquire loop. One request id serves every attempt of one call, so a
 * resend, a retry after a timeout, and a hand-off confirmation are all
 * recognised by the script and never count twice.
 *
 * Busy: subscribe to the lock's channel (once), join the FIFO queue, sleep
 * until woken by a hand-off, bounded by the holder's remaining lease and the
 * caller's deadline. Steady contention costs three calls per section: the
 * queued attempt, the hand-off confirmation and the release.
 */
export async function acquireLoop(ctx: AcquireContext, req: AcquireRequest): Promise<Granted | undefined> {
  const requestId = randomId();
  const started = req.started ?? performance.now();
  // Listening, or spinning (no subscription to wait for): the first attempt queues already.
  if (req.mode === 'wait' && (ctx.waiters.spinning || ctx.waiters.isListening(req.keys.channel))) return waitLoop(ctx, req, requestId, started, undefined, 0);
  let sent = false;
  let invokedAt: number;
  let reply: AcquireReply;
  try {
    if (ctx.isClosed()) throw new ClientClosedError();
    req.signal?.throwIfAborted();
    invokedAt = req.now ?? performance.now();
    sent = true;
    reply = await send(ctx, req, requestId, req.mode === 'wait' ? 'try' : req.mode);
    if (!waitsOn(req, reply)) return outcomeOf(req, reply, requestId, invokedAt);
  } catch (error) {
    return failed(ctx, req, requestId, sent, started, error);
  }
  return waitLoop(ctx, req, requestId, started, reply, invokedAt);
}

/**
 * The loop from its queued attempts on: from the start for a caller
 * subscribed already ('join'), else after the first attempt's `busy` reply
 * to a call sent at `busyAt`.
 */
async function waitLoop(
  ctx: AcquireContext,
  req: AcquireRequest,
  requestId: string,
  started: number,
  busy: BusyReply | undefined,
  busyAt: number,
): Promise<Granted | undefined> {
  let waiter: Waiter | undefined;
  let sent = busy !== undefined;
  // Redis answered busy to a call sent at lastBusyAt: any later hand-off to us happened after it.
  let lastBusyAt = busyAt;
  let lastBusyServerMs = busy?.serverMs;
  try {
    if (busy && req.deadline !== undefined && performance.now() >= req.deadline) throw DEADLINE_REACHED;
    // A queued attempt can be handed the lock before its reply is read: the
    // waiter must be registered before the attempt goes out, or that hand-off
    // message finds nobody and the claim lapses. Subscribed now, the next
    // attempt is queued, so no release is missed.
    waiter = await ctx.waiters.join(req.keys.channel, requestId, req.deadline ?? Infinity, false, req.signal);
    for (;;) {
      if (ctx.isClosed()) throw new ClientClosedError();
      req.signal?.throwIfAborted();
      const invokedAt = performance.now();
      sent = true;
      const reply = await send(ctx, req, requestId, 'join');
      if (!waitsOn(req, reply)) return outcomeOf(req, reply, requestId, invokedAt);
      lastBusyAt = invokedAt;
      lastBusyServerMs = reply.serverMs;
      if (req.deadline !== undefined && performance.now() >= req.deadline) throw DEADLINE_REACHED;
      // Not subscribed (spinning, a failed subscribe, a reconnecting
      // subscriber): no message can come, so look again soon (a hand-off to
      // us is found by that look) rather than sleep out the holder's lease.
      await waiter.sleep(performance.now() + waiter.lookAgainIn(reply.retryAfterMs, reply.place) + 1, req.signal);
      const handoff = waiter.takeHandoff();
      // With minReplicas the hand-off is only taken once confirmed on enough
      // replicas: the next attempt does that, found granted by its request id.
      if (handoff && !ctx.replication && !isStale(handoff.serverMs, lastBusyServerMs)) {
        // Held for us for claimMs from the hand-off: start now, and confirm in
        // the background, only while most of the claim is still ahead. With
        // less left (a message read late), the next attempt confirms first and
        // the caller starts on the full lease: a waiter never starts on a
        // claim that could run out before its confirmation lands.
        const now = performance.now();
        const start = handoffStart(lastBusyAt, lastBusyServerMs, handoff.serverMs, now);
        const claimEnds = start + handoff.claimMs - ctx.marginMs(handoff.claimMs);
        if (claimEnds - now >= handoff.claimMs / 2) {
          return {
            token: handoff.token,
            holdCount: 1,
            invokedAt: start,
            requestId,
            claim: { claimMs: handoff.claimMs, requestId },
          };
        }
      }
      if (req.deadline !== undefined && performance.now() >= req.deadline) throw DEADLINE_REACHED;
    }
  } catch (error) {
    // Awaited here, so that the waiter is disposed of only after the clean-up.
    return await failed(ctx, req, requestId, sent, started, error);
  } finally {
    waiter?.dispose();
  }
}

/**
 * What the loop throws when the caller's deadline is reached: `failed` turns
 * it into the LockTimeoutError, with the time waited read when it rejects.
 */
const DEADLINE_REACHED = new Error('the wait reached its deadline');

/**
 * How the loop fails with `error`: what was sent is undone first (see below).
 * A timeout says how long the caller waited until this rejection.
 */
async function failed(ctx: AcquireContext, req: AcquireRequest, requestId: string, sent: boolean, started: number, error: unknown): Promise<never> {
  if (error instanceof ReplicationError) {
    // Granted on the primary only: give it back before reporting, re-entry included.
    await ctx.cancel(req.keys, req.owner, requestId, req.kind);
    throw error;
  }
  if (sent && req.mode !== 'reenter') {
    // The clean-up undoes, by the request id, whatever an attempt did or
    // will still do (one whose reply was not waited for may yet be applied:
    // it comes first on the connection, then this). It is sent before the
    // caller hears of the failure, so the caller's next call on the
    // connection comes after it, and it is awaited as long as the caller's
    // wait allows: a waitMs that ran out, or an aborted signal, ends the
    // wait now, however slow the server (a hung server would hold the
    // rejection for a whole commandTimeoutMs).
    const cleanup = ctx.cancel(req.keys, req.owner, requestId, req.kind);
    const waitMs = cleanupWaitMs(ctx, req.deadline, req.signal);
    if (waitMs > 0) await withTimeout(cleanup, waitMs).catch(() => undefined);
  }
  if (error === DEADLINE_REACHED && !ctx.isClosed()) throw new LockTimeoutError(req.name, Math.round(performance.now() - started));
  throw waitFailure(error, req.name, started, req.deadline, ctx.isClosed());
}

/**
 * What a wait that failed with `error` rejects with, for every kind's wait: ClientClosedError when
 * the client closed meanwhile; LockTimeoutError for `name` (caused by it, with the time waited
 * since `started`) when a Redis failure came at or past the caller's `deadline`: the wait ran out
 * on it; else `error` as it is.
 */
export function waitFailure(error: unknown, name: string, started: number, deadline: number | undefined, closed: boolean): unknown {
  if (closed && !(error instanceof ClientClosedError)) return new ClientClosedError();
  const now = performance.now();
  if (deadline !== undefined && now >= deadline && isHoldfastError(error) && error.code.startsWith('ERR_REDIS')) {
    return new LockTimeoutError(name, Math.round(now - started), { cause: error });
  }
  return error;
}

/**
 * How long a failed acquisition waits for its clean-up's reply (see
 * `failed`): within what is left of the caller's wait (`deadline`, `signal`),
 * and never past one commandTimeoutMs. 0 or less: not at all.
 */
export function cleanupWaitMs(ctx: AcquireContext, deadline: number | undefined, signal: AbortSignal | undefined): number {
  if (signal?.aborted) return 0;
  const { commandTimeoutMs } = ctx.policy;
  return deadline === undefined ? commandTimeoutMs : Math.min(commandTimeoutMs, Math.floor(deadline - performance.now()));
}

/**
 * A hand-off announced before the last queued attempt ran (read late, after a
 * pause) is stale: that attempt was answered busy, so the claim it made had
 * already run out and gone to someone else. Starting on it would put two
 * holders in their sections (found by the protocol model, test/model). At the
 * same server millisecond the hand-off came after the attempt: a claim seen by
 * the attempt would have been granted to it, and a claim cannot run out within
 * the same millisecond it was made.
 */
export function isStale(handoffServerMs: number | undefined, busyServerMs: number | undefined): boolean {
  return handoffServerMs !== undefined && busyServerMs !== undefined && handoffServerMs < busyServerMs;
}

/**
 * The earliest local time a hand-off can have happened. The queued attempt
 * sent at `busyAt` ran on the server at server time `busyServerMs`, no earlier
 * than `busyAt`; the hand-off ran `handoffServerMs - busyServerMs` later by the
 * server's clock. Counting the claim from `busyAt` alone would date it a whole
 * wait too early (a waiter queued behind a 30 s lease would start with nothing
 * left). The elapsed server time is clamped to what the local clock allows, so
 * a server clock stepping backwards only makes the estimate earlier (safe).
 */
export function handoffStart(busyAt: number, busyServerMs: number | undefined, handoffServerMs: number | undefined, now: number): number {
  if (busyServerMs === undefined || handoffServerMs === undefined) return busyAt;
  return busyAt + Math.max(0, Math.min(handoffServerMs - busyServerMs, now - busyAt));
}
