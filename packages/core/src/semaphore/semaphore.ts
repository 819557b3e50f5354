import { performance } from 'node:perf_hooks';
import type { Engine } from '../engine/engine.js';
import { grantHold } from '../engine/grant.js';
import { KeyConflictError } from '../errors/errors.js';
import type { Hold } from '../engine/hold.js';
import { holdOf, Lease, type LeaseOps } from '../lease/lease.js';
import { engineLeaseOps } from '../lease/lease-ops.js';
import { runWithLease } from '../lease/acquire-lease.js';
import * as validate from '../options/validate.js';
import { callerSignal, traceAcquire } from '../telemetry/telemetry.js';
import { forceReleaseSemaphore, inspectSemaphore, PermitCountMismatchError, permitKind } from './semaphore-calls.js';
import { semaphoreKeys, type SemaphoreKeys } from './semaphore-keys.js';
import { MAX_PERMITS, resolvePermitOptions, resolveSemaphoreOptions, type PermitAcquireOptions, type PermitTryAcquireOptions, type SemaphoreOptions } from './semaphore-options.js';

/**
 * Permits of a semaphore, held until released or until the lease runs out.
 * Every acquisition is its own lease (semaphores are not reentrant):
 * `holdCount` is always 1, and `token` is strictly greater than every token
 * issued before for this semaphore's name.
 *
 * @hideconstructor
 */
export class PermitLease extends Lease {
  /** How many permits this lease holds. */
  readonly permits: number;

  /** @internal */
  constructor(ops: LeaseOps, hold: Hold, permits: number) {
    super(ops, hold, 1);
    this.permits = permits;
  }
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
  readonly #engine: Engine;
  /** The semaphore's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: SemaphoreKeys;
  #permits: number;

  /** @internal */
  constructor(engine: Engine, name: string, keys: SemaphoreKeys, permits: number) {
    this.#engine = engine;
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
    return runWithLease(this.#engine, lease, () => fn(lease));
  }

  /**
   * Permits free now: the count less the permits of every holder whose lease
   * has not ended by the server's clock (expired holders are purged first).
   * Negative after `setPermits()` lowered the count below the permits in use:
   * that many must be released before anyone is admitted again.
   * `PermitCountMismatchError` when Redis stores another count.
   */
  async availablePermits(): Promise<number> {
    this.#engine.assertOpen();
    const state = await inspectSemaphore(this.#engine, this.keys);
    if (state.foreign) throw new KeyConflictError(this.name, 'semaphore');
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
    this.#engine.assertOpen();
    const count = validate.positiveInteger('permits', permits, MAX_PERMITS);
    const state = await inspectSemaphore(this.#engine, this.keys, count);
    if (state.foreign) throw new KeyConflictError(this.name, 'semaphore');
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
    this.#engine.assertOpen();
    const outcome = await forceReleaseSemaphore(this.#engine, this.keys);
    if (outcome.foreign) throw new KeyConflictError(this.name, 'semaphore');
    this.#engine.forceReleased(this.keys.lock);
    return outcome.removed;
  }

  #traced(options: unknown, mode: 'wait' | 'try'): Promise<PermitLease | null> {
    const clientId = this.#engine.clientId;
    return traceAcquire(() => ({ name: this.name, kind: 'semaphore', mode, clientId, signal: callerSignal(options) }), () => this.#acquire(options, mode), holdOf);
  }

  #acquire(options: unknown, mode: 'wait' | 'try'): Promise<PermitLease | null> {
    try {
      const engine = this.#engine;
      engine.assertOpen();
      const opts = resolvePermitOptions(options, this.#permits);
      const started = performance.now();
      const kind = permitKind(this.keys, opts.permits, this.#permits);
      return grantHold(engine, { name: this.name, keys: this.keys, kind }, opts, mode, started, (hold) => {
        const waitedMs = Math.round(performance.now() - started);
        engine.emitLazily('acquired', () =>
          hold.eventPayload({ name: this.name, token: hold.token, holdCount: 1, waitedMs, reentrant: false, permits: opts.permits }),
        );
        return new PermitLease(engineLeaseOps(engine), hold, opts.permits);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

/** `client.semaphore(name, options)`: a semaphore by name (no I/O). */
export function newSemaphore(engine: Engine, name: string, options: SemaphoreOptions): Semaphore {
  engine.assertOpen();
  const { permits } = resolveSemaphoreOptions(options);
  return new Semaphore(engine, name, semaphoreKeys(engine.options.prefix, validate.lockName(name), engine.keyPrefix), permits);
}
