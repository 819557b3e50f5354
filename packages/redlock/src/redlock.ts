import { performance } from 'node:perf_hooks';
import { EventEmitter } from 'eventemitter3';
import {
  ClientClosedError,
  type CloseOptions,
  type LostReason,
  type RedisLike,
  type RenewalHold,
  type RenewalResult,
  type RenewalTarget,
  type Renewer,
} from '@holdfast/core';
import {
  withTimeout,
  HoldBook,
  ServerCheck,
  watchConnection,
  type ConnectionEpoch,
  Waiters,
  currentOwner,
  emitSafely,
  lockKeys,
  callerSignal,
  publishLost,
  randomId,
  resolveAcquireOptions,
  resolveCloseOptions,
  runOwning,
  TimeoutQueue,
  traceAcquire,
  traceExtend,
  traceRelease,
  traceRenewal,
  validate,
  type LockKeys,
  type OwnerRef,
} from '@holdfast/core/internal';
import type { LoopContext } from './acquire-loop.js';
import { acquireNew, reenter, type AcquireEnv } from './acquire-new.js';
import type { RedlockEvents } from './events.js';
import type { RedlockHold } from './hold.js';
import { releaseQuorum } from './hold-ops.js';
import { forceReleaseLock, inspectLock } from './inspect.js';
import { validateInstances } from './instances.js';
import { RedlockLease, holdOf, type RedlockLeaseHost } from './lease.js';
import { extendLease, releaseLease, type LeaseEnv } from './lease-ops.js';
import { RedlockLock, type RedlockLockHost } from './lock.js';
import { resolveRedlockOptions, type RedlockOptions, type ResolvedRedlockOptions } from './options.js';
import { quorumOf } from './quorum.js';
import { Readiness } from './readiness.js';
import { renewOnQuorum } from './renew.js';

/** What core's telemetry channels call a Redlock's holds. */
const TELEMETRY_KIND = 'redlock';

/**
 * Locks over N independent Redis instances (the Redlock algorithm), with
 * the same Lock interface, reentrancy, events and watchdog support as
 * core's LockClient. Every operation needs a majority of instances; none
 * waits for more than a majority. The user's clients are never closed.
 */
export class Redlock extends EventEmitter<RedlockEvents> implements RenewalTarget {
  /** Random id of this Redlock; part of every owner id it creates. */
  readonly id = randomId(9);
  /** The options this Redlock runs with, every default filled in. */
  readonly options: ResolvedRedlockOptions;
  /** Instances that must agree: floor(N / 2) + 1. */
  readonly quorum: number;
  readonly #waiters: readonly Waiters[];
  readonly #holds: HoldBook<RedlockHold>;
  readonly #closing = new AbortController();
  readonly #ctx: LoopContext;
  readonly #lockHost: RedlockLockHost;
  readonly #leaseHost: RedlockLeaseHost;
  readonly #connections: ConnectionEpoch[];
  readonly #background = new Set<Promise<void>>();
  readonly #timeouts: TimeoutQueue;
  /** Set when close() resolves: later background failures are dropped, not emitted. */
  #quiet = false;
  readonly #acquireEnv: AcquireEnv;
  /** Keys by lock name (validated when first built). */
  readonly #keys: (name: string) => LockKeys;
  #closed = false;

  /**
   * @param instances one ioredis or node-redis client per independent Redis server (not
   * replicas of each other). An odd count is best: N = 2f + 1 survives f
   * failures, and an even count survives no more failures than one fewer.
   */
  constructor(instances: readonly RedisLike[], options?: RedlockOptions) {
    super();
    const clients = validateInstances(instances);
    this.options = resolveRedlockOptions(options);
    this.quorum = quorumOf(clients.length);
    this.#timeouts = new TimeoutQueue(this.options.instanceTimeoutMs);
    this.#holds = new HoldBook<RedlockHold>(this.options.driftFactor, 'Redlock', (hold, reason, error) => {
      this.#emit('lost', { name: hold.name, token: hold.token, reason, error });
      publishLost(this.id, hold, reason, error, TELEMETRY_KIND);
    });
    // Once close() resolved, nothing more is emitted (see inBackground).
    const emitError = (error: unknown) => {
      if (!this.#quiet) this.#emit('error', error);
    };
    this.#connections = clients.map((redis) => watchConnection(redis));
    // Per instance, in parallel, one attempt bounded like any instance call.
    const checkPolicy = { commandTimeoutMs: this.options.instanceTimeoutMs, retries: 0 };
    const serverChecks = clients.map(
      (redis, i) =>
        new ServerCheck(redis, this.options.evictionCheck, checkPolicy, this.#connections[i]!.current, emitError, true),
    );
    this.#waiters = clients.map(
      (redis) =>
        new Waiters(redis, {
          lingerMs: this.options.subscriptionLingerMs,
          timeoutMs: this.options.commandTimeoutMs,
          onError: emitError,
        }),
    );
    const keyPrefix = clients[0]!.keyPrefix;
    this.#keys = (name) => lockKeys(this.options.prefix, validate.lockName(name), keyPrefix);
    this.#ctx = {
      instances: clients,
      quorum: this.quorum,
      options: this.options,
      emitError,
      inBackground: (work) => {
        const tracked = work.then(
          () => undefined,
          (error: unknown) => emitError(error),
        );
        this.#background.add(tracked);
        void tracked.finally(() => this.#background.delete(tracked));
      },
      timeouts: this.#timeouts,
      waiters: this.#waiters,
      ownerPrefix: `${this.id}:`,
      closeSignal: this.#closing.signal,
    };
    this.#lockHost = {
      acquire: (lock, opts, mode) => this.#acquire(lock, opts, mode),
      withLock: (lock, fn, opts) => this.#withLock(lock, fn, opts),
      inspect: (lock) => {
        this.#assertOpen();
        return inspectLock(this.#ctx, lock.name, lock.keys);
      },
      forceRelease: (lock) => this.#forceRelease(lock),
    };
    const env: LeaseEnv = {
      ctx: this.#ctx,
      holds: this.#holds,
      released: (event) => this.#emit('released', event),
      extended: (event) => this.#emit('extended', event),
    };
    // Published on core's diagnostics channels (README, "Telemetry"), kind `redlock`.
    this.#leaseHost = {
      release: (lease, hold, strict) =>
        strict && this.#closed
          ? Promise.reject(new ClientClosedError())
          : traceRelease(this.id, hold, lease.token, () => releaseLease(env, lease as RedlockLease, hold as RedlockHold, strict), TELEMETRY_KIND),
      extend: (hold, ms) =>
        this.#closed
          ? Promise.reject(new ClientClosedError())
          : traceExtend(this.id, hold, ms, () => extendLease(env, hold as RedlockHold, ms), TELEMETRY_KIND),
      sweepExpired: () => this.#holds.sweepExpired(),
    };
    const readiness = new Readiness(clients, this.options.commandTimeoutMs, serverChecks);
    this.#acquireEnv = {
      ctx: this.#ctx,
      holds: this.#holds,
      leaseHost: this.#leaseHost,
      ready: () => readiness.ready(),
      isClosed: () => this.#closed,
      acquired: (event) => this.#emit('acquired', event),
      markLost: (hold, reason) => this.markLost(hold, reason),
    };
  }

  /** Number of instances. */
  get instanceCount(): number {
    return this.#ctx.instances.length;
  }

  /** A lock by name (no I/O). Names: non-empty strings of at most 1024 UTF-8 bytes. */
  lock(name: string): RedlockLock {
    this.#assertOpen();
    const keys = this.#keys(name);
    return new RedlockLock(this.#lockHost, name, keys);
  }

  /** Leases this Redlock holds now (one per owner and lock). */
  get heldCount(): number {
    return this.#holds.size;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Stops: waiting acquisitions reject with `ClientClosedError`, pub/sub is
   * unsubscribed on every instance, timers are cleared and an attached
   * watchdog stops. Every lease still held ends as in core: its `signal`
   * aborts with `ClientClosedError`, `lost` is emitted (reason `closed`), a
   * running `withLock` rejects; the locks run out by their TTL unless
   * `{ release: true }` frees them first. The user's clients stay open.
   */
  async close(options?: CloseOptions): Promise<void> {
    if (this.#closed) return;
    const { release } = resolveCloseOptions(options);
    const holds = this.#holds.all();
    this.#closed = true;
    this.#closing.abort(new ClientClosedError());
    this.#holds.closeAll();
    for (const connection of this.#connections) connection.stop();
    if (release) {
      await Promise.all(holds.map((hold) => releaseQuorum(this.#ctx, hold, true).catch(this.#ctx.emitError)));
    }
    await Promise.all(this.#waiters.map((w) => w.close()));
    // Clean-ups still under way (undoing late grants) report before close()
    // resolves; one that outlives a command timeout finishes silently.
    if (this.#background.size > 0) {
      await withTimeout(Promise.allSettled([...this.#background]), this.options.commandTimeoutMs).catch(() => undefined);
    }
    // Fan-outs still waiting keep their timer; answered ones leave none.
    this.#timeouts.clearIdle();
    this.#quiet = true;
  }

  attachRenewer(renewer: Renewer): void {
    this.#assertOpen();
    this.#holds.attach(renewer);
  }

  detachRenewer(renewer: Renewer): void {
    this.#holds.detachRenewer(renewer);
  }

  renewHolds(holds: readonly RenewalHold[]): Promise<RenewalResult[]> {
    return traceRenewal(this.id, holds.length, () => renewOnQuorum(this.#ctx, holds as readonly RedlockHold[]));
  }

  confirmRenewal(hold: RenewalHold, startedAt: number): void {
    this.#holds.confirmRenewal(hold as RedlockHold, startedAt);
  }

  markLost(hold: RenewalHold, reason: LostReason, cause?: unknown): void {
    this.#holds.markLost(hold as RedlockHold, reason, cause);
  }

  sweepExpired(): void {
    this.#holds.sweepExpired();
  }

  #emit<K extends keyof RedlockEvents>(event: K, ...args: RedlockEvents[K]): void {
    emitSafely(this, event, args);
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError();
  }

  #scopeKey(lock: RedlockLock): string {
    return `${this.id}\u0000${lock.name}`;
  }

  #acquire(lock: RedlockLock, options: unknown, mode: 'wait' | 'try'): Promise<RedlockLease | null> {
    return traceAcquire(
      () => ({ name: lock.name, kind: TELEMETRY_KIND, mode, clientId: this.id, signal: callerSignal(options) }),
      () => this.#acquireNow(lock, options, mode),
      holdOf,
    );
  }

  #acquireNow(lock: RedlockLock, options: unknown, mode: 'wait' | 'try'): Promise<RedlockLease | null> {
    try {
      this.#assertOpen();
      const opts = resolveAcquireOptions(options);
      // Only a withLock frame of this lock makes this chain an owner; a bare
      // acquire() is a new owner every time (see core's owner.ts).
      const ref = currentOwner(this.#scopeKey(lock));
      const started = performance.now();
      if (ref) return reenter(this.#acquireEnv, ref.owner, lock, opts.leaseMs, started);
      return acquireNew(this.#acquireEnv, lock, opts, mode, started);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async #withLock<T>(lock: RedlockLock, fn: (lease: RedlockLease) => Promise<T> | T, options: unknown): Promise<T> {
    validate.fn('fn', fn);
    const lease = (await this.#acquire(lock, options, 'wait'))!;
    const hold = holdOf(lease);
    const ref: OwnerRef = { owner: hold.owner, isActive: () => hold.active };
    let result: T;
    try {
      result = await runOwning(this.#scopeKey(lock), ref, () => fn(lease));
    } catch (error) {
      await this.#leaseHost.release(lease, hold, false).catch(this.#ctx.emitError);
      throw error;
    }
    // Lost, or closed, while `fn` ran: the signal's reason says which.
    if (hold.lostError) throw hold.abortReason ?? hold.lostError;
    await this.#leaseHost.release(lease, hold, true);
    return result;
  }

  async #forceRelease(lock: RedlockLock): Promise<boolean> {
    this.#assertOpen();
    for (const hold of this.#holds.all()) {
      if (hold.name === lock.name) this.markLost(hold, 'deleted');
    }
    return forceReleaseLock(this.#ctx, lock.name, lock.keys);
  }
}
