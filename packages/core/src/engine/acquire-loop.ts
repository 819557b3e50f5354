import { performance } from 'node:perf_hooks';
import { ClientClosedError, KeyConflictError, LockLostError, LockTimeoutError, ReplicationError, isHoldfastError } from '../errors/errors.js';
import { conflictKind, type AcquireContext, type AcquireRequest, type LockKind } from './kind.js';
import { queueScriptKeys, type LockKeys } from '../keys/keys.js';
import { randomId } from './owner.js';
import { callRedis, withTimeout } from '../port/redis-call.js';
import { acquireReply, takeReply, type AcquireReply } from '../scripts/replies.js';
import { takenLock, takenPrefix } from '../scripts/taken-lock.js';
import { callGranting, runScript, type Script } from '../scripts/index.js';
import type { Waiter } from './waiter.js';
import { handoffStart, isStale } from './handoff-time.js';

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
  /**
   * Set when the kind's `take` script granted a free lock nobody queued for:
   * the string lock it wrote (`takenLock`), which its release can send to
   * `releaseTaken`.
   */
  readonly taken?: string | undefined;
}

/** One attempt of `mode` (take.lua first for a new owner's 'try', as the acquire loop sends it). */
export function send(ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string): Promise<AcquireReply> {
  const taking = sendTake(ctx, req, requestId, mode);
  return taking ? taking.then((reply) => reply ?? sendFull(ctx, req, requestId, mode)) : sendFull(ctx, req, requestId, mode);
}

/**
 * A new owner's 'try' as the kind's `take` script, or undefined when the kind
 * has none (or `mode` is another). Resolves undefined for what take.lua leaves
 * to acquire.lua (a resend, a hand-off, a lock without TTL): that goes there
 * next, with the same request id, nothing written meanwhile.
 */
function sendTake(ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string): Promise<AcquireReply | undefined> | undefined {
  if (mode !== 'try' || req.kind.calls) return undefined;
  const take = takeCall(req.kind, req.keys, req.owner, requestId, req.leaseMs, ctx.isDefaultLease(req.leaseMs));
  return take && attempt(ctx, req, take.script, take.keys, take.args, takeReply);
}

/** One attempt through the kind's acquire script (or its own calls). */
function sendFull(ctx: AcquireContext, req: AcquireRequest, requestId: string, mode: string): Promise<AcquireReply> {
  const { keys, kind } = req;
  if (kind.calls) return kind.calls.acquire(ctx, req, requestId, mode);
  const args: (string | number)[] = [req.owner, req.leaseMs, requestId, mode, ctx.handoffTimeoutMs, keys.channel];
  if (kind.args.length > 0) args.push(...kind.args, ...(req.via === undefined ? [] : [req.via]));
  return attempt(ctx, req, kind.acquire, queueScriptKeys(keys), args, acquireReply) as Promise<AcquireReply>;
}

/**
 * A new owner's 'try' as the kind's `take` script (the mutex's take.lua),
 * or undefined for a kind without one: the lock, queue and fencing keys, the
 * string lock but its token (`takenPrefix`), and the lease unless `ownLease`
 * (a lease of the client's configuration, which a copy of the script carries
 * in its source). Core's acquisitions and Redlock's first round on each
 * instance both send it this way.
 */
export function takeCall(
  kind: LockKind,
  keys: LockKeys,
  owner: string,
  requestId: string,
  leaseMs: number,
  ownLease: boolean,
): { script: Script; keys: string[]; args: (string | number)[] } | undefined {
  if (!kind.take) return undefined;
  const scriptKeys = [keys.lock, keys.queue, keys.fence];
  const prefix = takenPrefix(owner, requestId);
  return kind.takeWithLease && ownLease
    ? { script: kind.takeWithLease(leaseMs), keys: scriptKeys, args: [prefix] }
    : { script: kind.take, keys: scriptKeys, args: [prefix, leaseMs] };
}

/** One script call of an attempt: a grant short of `minReplicas` is a ReplicationError. */
function attempt(
  ctx: AcquireContext,
  req: AcquireRequest,
  script: Script,
  scriptKeys: string[],
  args: (string | number)[],
  decode: (reply: unknown, leaseMs: number) => AcquireReply | undefined,
): Promise<AcquireReply | undefined> {
  const limits = req.deadline === undefined && req.signal === undefined ? undefined : { deadline: req.deadline, signal: req.signal };
  return callGranting(ctx, script, scriptKeys, args, {
    name: req.name,
    decode: (reply) => decode(reply, req.leaseMs),
    granted: (decoded) => decoded?.granted === true,
    limits,
  });
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
    const { token, holdCount } = reply;
    // One shape for every grant (no conditional spread: V8 copies those in its runtime).
    return { token, holdCount, invokedAt, requestId, claim: undefined, taken: reply.taken ? takenLock(req.owner, requestId, token) : undefined };
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
 *
 * The first attempt of a caller not subscribed yet is a then() chain: most
 * acquisitions end with it (granted, or a 'try' found busy), and an async
 * function resumed after its reply would cost each of them a promise and a
 * turn more. A busy reply goes on in `waitLoop`.
 */
export function acquireLoop(ctx: AcquireContext, req: AcquireRequest): Promise<Granted | undefined> {
  return acquireAnd(ctx, req, asIs);
}

const asIs = <T>(value: T): T => value;

/**
 * The acquire loop, its outcome handed to `finish` in the same then() that
 * reads the first attempt's reply: a new hold is booked and its lease made
 * there (grant.ts), one promise and one turn fewer than a then() on the
 * loop's own promise. What `finish` throws rejects the result as it is: the
 * loop's clean-up (`failed`) is for the attempts, not for what follows.
 */
export function acquireAnd<T>(ctx: AcquireContext, req: AcquireRequest, finish: (granted: Granted | undefined) => T | Promise<T>): Promise<T> {
  const requestId = randomId();
  const started = req.started ?? performance.now();
  // Listening, or spinning (no subscription to wait for): the first attempt queues already.
  if (req.mode === 'wait' && (ctx.waiters.spinning || ctx.waiters.isListening(req.keys.channel))) {
    return waitLoop(ctx, req, requestId, started, undefined, 0).then(finish);
  }
  let invokedAt: number;
  try {
    if (ctx.isClosed()) throw new ClientClosedError();
    req.signal?.throwIfAborted();
    invokedAt = req.now ?? performance.now();
  } catch (error) {
    return failed(ctx, req, requestId, false, started, error);
  }
  const sentMode = req.mode === 'wait' ? 'try' : req.mode;
  const onError = (error: unknown) => failed(ctx, req, requestId, true, started, error);
  const onReply = (reply: AcquireReply): T | Promise<T> => {
    if (waitsOn(req, reply)) return waitLoop(ctx, req, requestId, started, reply, invokedAt).then(finish);
    let outcome: Granted | undefined;
    try {
      outcome = outcomeOf(req, reply, requestId, invokedAt);
    } catch (error) {
      return onError(error);
    }
    return finish(outcome);
  };
  try {
    // Not send(): its then() would cost every uncontended acquire a promise more.
    const taking = sendTake(ctx, req, requestId, sentMode);
    if (!taking) return sendFull(ctx, req, requestId, sentMode).then(onReply, onError);
    return taking.then((reply) => (reply === undefined ? sendFull(ctx, req, requestId, sentMode).then(onReply, onError) : onReply(reply)), onError);
  } catch (error) {
    return onError(error);
  }
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
      const reply = await sendFull(ctx, req, requestId, 'join');
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
            taken: undefined,
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
  if (ctx.isClosed() && !(error instanceof ClientClosedError)) throw new ClientClosedError();
  const now = performance.now();
  if (error === DEADLINE_REACHED) throw new LockTimeoutError(req.name, Math.round(now - started));
  if (req.deadline !== undefined && now >= req.deadline && isHoldfastError(error) && error.code.startsWith('ERR_REDIS')) {
    throw new LockTimeoutError(req.name, Math.round(now - started), { cause: error });
  }
  throw error;
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
