import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockLostError, isHoldfastError } from '../errors/errors.js';
import { randomId } from '../engine/owner.js';
import { RenewedClaim } from '../engine/renewed-claim.js';
import type { Waiter } from '../engine/waiter.js';
import { MAX_DURATION_MS } from '../options/validate.js';
import { traceAcquire } from '../telemetry/telemetry.js';
import { claimCall, releaseCall, renewCall, storeCall, type ClaimTarget, type StoredResult, type ResultClaimEngine } from './claim-calls.js';
import { IdempotencyConflictError } from './claim-errors.js';

/**
 * Claim attempts of one call whose reply came back too late to trust (read
 * after the claim could have expired) before it gives the key up.
 */
const LATE_REPLY_ATTEMPTS = 3;

/** One call's claim of a key whose result is stored: an idempotency key's `run`, a flight. */
export interface ClaimRequest {
  readonly target: ClaimTarget;
  /** `idempotency` or `single-flight`: telemetry's and the events' kind. */
  readonly kind: 'idempotency' | 'single-flight';
  /** The idempotency's name (the conflict error's), or the flight's key. */
  readonly name: string;
  /** The key as the work sees it (`ClaimView.key`) and events name it. */
  readonly key: string;
  readonly fingerprint: string;
  readonly leaseMs: number;
  /** The longest wait for another owner's claim to end, ms; undefined: as long as it runs. */
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** `i`: a stored result is replayed; `n`: a flight, which a stored result does not answer until it joined one. */
  readonly mode: 'i' | 'n';
  /** The error of a wait that ran out, after `waitedMs`. */
  readonly timedOut: (waitedMs: number) => Error;
  /** Called when the call starts waiting for another owner's claim. */
  readonly onWait?: () => void;
}

/** This call won the key: it runs the work under `claim`, then `finishClaim`s it. */
export interface WonClaim {
  readonly won: true;
  readonly claim: RenewedClaim;
  readonly owner: string;
}

/** The outcome of `claimOrWait`: the key won, or the result another call stored. */
export type ClaimOutcome = WonClaim | ({ readonly won: false } & StoredResult);

/**
 * Claims the request's key, or waits for the call that holds it: woken over
 * pub/sub when it stores its result or gives the key up (a failed call), and
 * when its claim's time to live (read with it) runs out, in case it crashed.
 * Nothing else polls Redis. Each wake-up claims again: the key is won by one
 * of the waiters when it was given up or expired, with a greater token.
 */
export async function claimOrWait(engine: ResultClaimEngine, request: ClaimRequest): Promise<ClaimOutcome> {
  const clientId = engine.clientId;
  const { signal } = request;
  // Traced as an acquisition whose result is the claim (its token), or null where a stored result answered.
  let outcome: ClaimOutcome | undefined;
  await traceAcquire(
    () => ({ name: request.key, kind: request.kind, mode: request.waitMs === 0 ? 'try' : 'wait', clientId, ...(signal ? { signal } : {}) }),
    async () => {
      outcome = await claimNow(engine, request);
      return outcome.won ? outcome.claim : null;
    },
    (claim) => claim,
  );
  return outcome!;
}

async function claimNow(engine: ResultClaimEngine, request: ClaimRequest): Promise<ClaimOutcome> {
  const { target, leaseMs, waitMs, signal } = request;
  const started = performance.now();
  const deadline = waitMs === undefined ? undefined : started + waitMs;
  // A call that answers at once is bounded by its call policy alone.
  const limits = { deadline: waitMs === 0 ? undefined : deadline, signal };
  const ready = engine.serverReady(limits.deadline, signal);
  if (ready) await ready;
  // One owner per call: a resend of its claim (after a lost reply) finds it its own.
  const owner = engine.clientId + randomId(6);
  let mode: 'i' | 'n' | 'j' = request.mode;
  let waiter: Waiter | undefined;
  let late = 0;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const sentAt = performance.now();
      const found = await claimCall(engine, target, owner, leaseMs, request.fingerprint, mode, limits);
      if (engine.isClosed()) throw new ClientClosedError();
      if (found.state === 'conflict') throw new IdempotencyConflictError(request.name, request.key);
      if (found.state === 'done') return { won: false, token: found.token, failed: found.failed, text: found.text };
      if (found.state === 'won') {
        const claimDeadline = sentAt + leaseMs - engine.marginMs(leaseMs);
        if (performance.now() < claimDeadline) {
          const claim = new RenewedClaim(engine, {
            kind: request.kind,
            key: request.key,
            token: found.token,
            ttlMs: leaseMs,
            deadline: claimDeadline,
            renew: (ms, callLimits) => renewCall(engine, target, owner, ms, callLimits),
          });
          const waitedMs = Math.round(performance.now() - started);
          engine.emitLazily('acquired', () => ({ name: request.key, token: found.token, holdCount: 1, waitedMs, reentrant: false, kind: request.kind }));
          return { won: true, claim, owner };
        }
        // Read after the claim could have expired: the same owner asks again (its own claim is
        // kept at least its lease); after a few such replies the key is given up.
        if (++late >= LATE_REPLY_ATTEMPTS) {
          await releaseCall(engine, target, owner).catch((error: unknown) => engine.emit('error', error));
          throw new LockLostError(request.key, found.token, 'unreachable');
        }
        continue;
      }
      // Another call's claim runs.
      const now = performance.now();
      if (deadline !== undefined && now >= deadline) throw request.timedOut(Math.round(now - started));
      if (!waiter) {
        // Subscribed before the next look: a result stored after it is heard.
        waiter = await engine.waiters.join(target.keys.channel, randomId(), deadline ?? Infinity, false, signal);
        if (engine.isClosed()) throw new ClientClosedError();
        if (request.mode === 'n') mode = 'j';
        request.onWait?.();
        continue;
      }
      // Its store or release wakes this waiter with its message; its crash sends none: its claim
      // (read with its time to live) is looked at again when that has run out. Without a
      // subscription (spinning, a subscribe that failed), it looks again after a backoff step.
      const expiresIn = found.pttl >= 0 ? Math.min(found.pttl + 1, MAX_DURATION_MS) : 0;
      const until = Math.min(now + waiter.lookAgainIn(expiresIn), deadline ?? Infinity);
      await waiter.sleep(until, signal);
      if (engine.isClosed()) throw new ClientClosedError();
    }
  } catch (error) {
    if (engine.isClosed() && !(error instanceof ClientClosedError)) throw new ClientClosedError();
    const now = performance.now();
    if (deadline !== undefined && now >= deadline && isHoldfastError(error) && error.code.startsWith('ERR_REDIS')) {
      throw request.timedOut(Math.round(now - started));
    }
    throw error;
  } finally {
    waiter?.dispose();
  }
}

/**
 * Ends a won claim with its work's outcome: `text` stored (kept `keepMs`) and
 * every waiter woken, or, with `text` undefined, the key given up (waiters
 * woken to claim it). A claim found lost before the store stores nothing and
 * rejects with its loss; a store the server refused because the claim expired
 * or was taken rejects with a `LockLostError`.
 */
export async function finishClaim(
  engine: ResultClaimEngine,
  target: ClaimTarget,
  won: WonClaim,
  stored: { text: string; failed: boolean; keepMs: number } | undefined,
): Promise<void> {
  const { claim, owner } = won;
  try {
    if (stored === undefined) {
      await releaseCall(engine, target, owner).catch((error: unknown) => engine.emit('error', error));
      return;
    }
    // A process resumed after a pause past its claim's end learns it here, before writing.
    const lost = claim.lostReason();
    if (lost !== undefined) throw lost;
    const outcome = await storeCall(engine, target, owner, stored.keepMs, stored.text, stored.failed);
    if (outcome !== 'ok') throw new LockLostError(claim.name, claim.token, outcome === 'gone' ? 'expired' : 'taken');
  } finally {
    claim.stop();
  }
}
