import { acquireLoop, type AcquireContext } from '../acquire.js';
import { ClientClosedError, KeyConflictError, LockTimeoutError, PermitCountMismatchError } from '../errors.js';
import type { AcquiredEvent } from '../events.js';
import { Hold } from '../hold.js';
import { holdOf, type LeaseHost } from '../lease.js';
import { callerSignal, traceAcquire } from '../telemetry.js';
import { confirmHandoff, type HoldHost } from '../lease-ops.js';
import { driftMarginMs } from '../options.js';
import { randomId } from '../owner.js';
import type { Renewer } from '../renewal.js';
import * as validate from '../validate.js';
import { PermitLease } from './permit-lease.js';
import { forceReleaseSemaphore, inspectSemaphore, permitKind } from './semaphore-calls.js';
import type { SemaphoreKeys } from './semaphore-keys.js';
import { MAX_PERMITS, resolvePermitOptions, type PermitAcquireOptions, type PermitTryAcquireOptions } from './semaphore-options.js';

/** What a Semaphore needs from its client (kept off the client's public surface). */
export interface SemaphoreHost {
  readonly ctx: AcquireContext;
  readonly holdHost: HoldHost;
  readonly leaseHost: LeaseHost;
  /** The client's id: the start of every owner id it makes. */
  readonly clientId: string;
  readonly driftFactor: number;
  /** The client's default lease, in ms. */
  readonly leaseMs: number;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /** The eviction-policy check still to be awaited before the first acquisition, if any. */
  serverReady(): Promise<void> | undefined;
  /** The attached watchdog, if any. */
  renewer(): Renewer | undefined;
  /** Takes a new hold into the client's books: deadline timer, close(), the watchdog when it renews. */
  adopt(hold: Hold, renewer: Renewer | undefined): void;
  /** Emits `acquired` with the payload `build` returns, built only when someone listens. */
  emitAcquired(build: () => AcquiredEvent): void;
  /** Ends this client's leases of the semaphore with `keys` as lost (reason `deleted`): they were force-released. */
  forceReleased(keys: SemaphoreKeys): void;
}

/**
 * A named counting semaphore: at most `permits` permits held at once, each
 * holder's permits held by a lease that expires (a holder that crashes gives
 * them back when its lease ends). Waiters are served first come, first
 * served, and woken by the release that frees enough permits (pub/sub, no
 * polling). Creating one does no I/O; every method goes through the client
 * it came from (`client.semaphore(name, { permits })`).
 *
 * Not reentrant: every acquisition is its own lease, even from inside
 * `withLock` of the same semaphore (it waits for permits like any other).
 *
 * @hideconstructor
 */
export class Semaphore {
  readonly #host: SemaphoreHost;
  /** The semaphore's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: SemaphoreKeys;
  #permits: number;

  /** @internal */
  constructor(host: SemaphoreHost, name: string, keys: SemaphoreKeys, permits: number) {
    this.#host = host;
    this.name = name;
    this.keys = keys;
    this.#permits = permits;
  }

  /** The permit count this object expects in Redis (changed by `setPermits()`). */
  get permits(): number {
    return this.#permits;
  }

  /**
   * Waits until `permits` (default 1) are held at once, behind every request
   * queued before it (or until `waitMs` runs out: `LockTimeoutError`; or
   * `signal` aborts: its reason). `PermitCountMismatchError` when Redis
   * stores another count for this semaphore.
   */
  async acquire(options?: PermitAcquireOptions): Promise<PermitLease> {
    return (await this.#traced(options, 'wait'))!;
  }

  /** Takes `permits` (default 1) if they are free and nobody is queued ahead, without waiting: `null` otherwise. */
  tryAcquire(options?: PermitTryAcquireOptions): Promise<PermitLease | null> {
    return this.#traced(options, 'try');
  }

  /**
   * Runs `fn` holding `permits` (default 1) and releases them afterwards,
   * whatever `fn` does. If the lease is lost while `fn` runs, the promise
   * rejects with that `LockLostError` even when `fn` resolved.
   */
  async withLock<T>(fn: (lease: PermitLease) => Promise<T> | T, options?: PermitAcquireOptions): Promise<T> {
    validate.fn('fn', fn);
    const lease = await this.acquire(options);
    const hold = holdOf(lease);
    const host = this.#host.leaseHost;
    let result: T;
    try {
      result = await fn(lease);
    } catch (error) {
      await host.disposeLease(lease, hold).catch((releaseError: unknown) => this.#host.ctx.onError(releaseError));
      throw error;
    }
    await host.disposeLease(lease, hold);
    if (hold.lostError) throw hold.abortReason ?? hold.lostError;
    return result;
  }

  /**
   * Permits free now: the count less the permits of every holder whose lease
   * has not ended by the server's clock (expired holders are purged first).
   * Negative after `setPermits()` lowered the count below the permits in use:
   * that many must be released before anyone is admitted again.
   * `PermitCountMismatchError` when Redis stores another count.
   */
  async availablePermits(): Promise<number> {
    this.#host.assertOpen();
    const state = await inspectSemaphore(this.#host.ctx, this.keys);
    if (state.foreign) throw new KeyConflictError(this.name);
    if (state.stored === undefined) return this.#permits;
    if (state.stored !== this.#permits) throw new PermitCountMismatchError(this.name, this.#permits, state.stored);
    return state.stored - state.used;
  }

  /**
   * Changes the permit count stored in Redis to `permits`, for every client,
   * and makes it this object's count. Waiters that now fit are handed their
   * permits at once. Lowering it below the permits in use takes none back:
   * holders keep theirs, and nobody is admitted until enough are released.
   * Other clients' objects, created with the old count, get
   * `PermitCountMismatchError` from then on. Resolves to the previous stored
   * count (undefined for a semaphore never used).
   */
  async setPermits(permits: number): Promise<number | undefined> {
    this.#host.assertOpen();
    const count = validate.positiveInteger('permits', permits, MAX_PERMITS);
    const state = await inspectSemaphore(this.#host.ctx, this.keys, count);
    if (state.foreign) throw new KeyConflictError(this.name);
    this.#permits = count;
    return state.previous;
  }

  /**
   * Takes back every holder's permits, whoever holds them, and hands them to
   * the waiters at the head of the queue (in order, as a release would). The
   * permit count stays. This client's own leases of the semaphore end at once
   * (`lost` with reason `deleted`, their signals abort); other clients' find
   * out at their next renewal, extend or release. Resolves to true when
   * permits were held. For recovery, not for normal use: it breaks the
   * holders' exclusion. `KeyConflictError` when a key holds data holdfast
   * did not write (left as it is).
   */
  async forceRelease(): Promise<boolean> {
    this.#host.assertOpen();
    const outcome = await forceReleaseSemaphore(this.#host.ctx, this.keys);
    if (outcome.foreign) throw new KeyConflictError(this.name);
    this.#host.forceReleased(this.keys);
    return outcome.removed;
  }

  #traced(options: unknown, mode: 'wait' | 'try'): Promise<PermitLease | null> {
    const clientId = this.#host.clientId;
    return traceAcquire(() => ({ name: this.name, kind: 'semaphore', mode, clientId, signal: callerSignal(options) }), () => this.#acquire(options, mode), holdOf);
  }

  async #acquire(options: unknown, mode: 'wait' | 'try'): Promise<PermitLease | null> {
    const host = this.#host;
    host.assertOpen();
    const opts = resolvePermitOptions(options, this.#permits);
    const started = performance.now();
    const evictionChecked = host.serverReady();
    if (evictionChecked) await evictionChecked;
    const renewer = opts.leaseMs === undefined ? host.renewer() : undefined;
    const leaseMs = opts.leaseMs ?? renewer?.timeoutMs ?? host.leaseMs;
    const deadline = opts.waitMs === undefined ? undefined : started + opts.waitMs;
    const kind = permitKind(this.keys, opts.permits, this.#permits);
    for (;;) {
      // One owner per acquisition: a resend of a granted request is recognised
      // by it, and cancelling it can only ever undo this acquisition.
      const owner = host.clientId + randomId(6);
      const granted = await acquireLoop(host.ctx, {
        name: this.name,
        keys: this.keys,
        owner,
        leaseMs,
        deadline,
        signal: opts.signal,
        mode,
        kind,
      });
      if (!granted) return null;
      const hold = new Hold({
        name: this.name,
        keys: this.keys,
        owner,
        token: granted.token,
        count: 1,
        leaseMs,
        deadline: granted.claim
          ? granted.invokedAt + granted.claim.claimMs - driftMarginMs(granted.claim.claimMs, host.driftFactor)
          : granted.invokedAt + leaseMs - driftMarginMs(leaseMs, host.driftFactor),
        autoRenew: renewer !== undefined,
        kind,
      });
      if (host.ctx.isClosed()) {
        void host.ctx.cancel(this.keys, owner, undefined, kind);
        throw new ClientClosedError();
      }
      if (performance.now() >= hold.deadline) {
        // Read after the lease it granted had run out (a stalled event loop):
        // never hand it out; undo it and try again while the wait allows.
        await host.ctx.cancel(this.keys, owner, granted.requestId, kind);
        if (mode === 'try') return null;
        if (deadline !== undefined && performance.now() >= deadline) {
          throw new LockTimeoutError(this.name, Math.round(performance.now() - started));
        }
        opts.signal?.throwIfAborted();
        continue;
      }
      host.adopt(hold, renewer);
      if (granted.claim) confirmHandoff(host.holdHost, hold, granted.claim.requestId);
      const waitedMs = Math.round(performance.now() - started);
      host.emitAcquired(() =>
        hold.eventPayload({ name: this.name, token: hold.token, holdCount: 1, waitedMs, reentrant: false, permits: opts.permits }),
      );
      return new PermitLease(host.leaseHost, hold, opts.permits);
    }
  }
}
