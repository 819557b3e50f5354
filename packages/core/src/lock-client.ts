import { EventEmitter } from 'eventemitter3';
import { acquireLoop, type AcquireContext } from './acquire.js';
import { DeadlineTimer } from './deadlines.js';
import { ClientClosedError, InvalidArgumentError, KeyConflictError, LockLostError, LockNotHeldError, LockTimeoutError, LockUpgradeError } from './errors.js';
import type { LostReason } from './errors.js';
import { emitLazily, emitSafely, type LockClientEvents } from './events.js';
import { Hold } from './hold.js';
import { lockKeys, type LockKeys } from './keys.js';
import { Lease, holdOf, type LeaseHost } from './lease.js';
import { Lock, type LockHost } from './lock.js';
import { MUTEX, READ, READ_WRITE, WRITE, type LockKind } from './lock-kind.js';
import { ReadWriteLock } from './read-write-lock.js';
import { resolveAcquireOptions, resolveClientOptions, resolveCloseOptions, driftMarginMs } from './options.js';
import type { CloseOptions, LockClientOptions, ResolvedClientOptions } from './options.js';
import { currentOwner, randomId, runOwning, type OwnerRef } from './owner.js';
import { callRedis, type CallPolicy } from './redis-call.js';
import { renewHolds } from './renew.js';
import type { RenewalHold, RenewalResult, RenewalTarget, Renewer } from './renewal.js';
import { forceReleaseLock, inspectLock, releaseHold } from './release.js';
import { confirmHandoff, extendLease, reenterHold, releaseLease, type HoldHost } from './lease-ops.js';
import { requirePort, type RedisPort } from './client/index.js';
import type { RedisLike } from './redis-like.js';
import { runScript } from './scripts/index.js';
import { watchConnection, type ConnectionEpoch } from './connection-epoch.js';
import { ServerCheck } from './server-check.js';
import { ClientRegistration } from './client-registry.js';
import { callerSignal, publishLost, telemetryKind, traceAcquire, traceExtend, traceRelease, traceRenewal } from './telemetry.js';
import * as validate from './validate.js';
import { Waiters } from './waiters.js';
import { MultiLock, type MultiLockHost } from './multi-lock.js';
import { Semaphore, type SemaphoreHost } from './semaphore/semaphore.js';
import { semaphoreKeys } from './semaphore/semaphore-keys.js';
import { resolveSemaphoreOptions, type SemaphoreOptions } from './semaphore/semaphore-options.js';
import { Election } from './election/election.js';
import type { ElectionEngine } from './election/election-engine.js';
import { electionKeys } from './election/election-keys.js';
import { resolveElectionOptions, type ElectionOptions } from './election/election-options.js';

/**
 * Entry point of @holdfast/core: hands out named locks over the user's ioredis
 * or node-redis client (standalone, Cluster or Sentinel), which it never
 * closes or reconfigures. Emits typed
 * lifecycle events (`LockClientEvents`).
 */
export class LockClient extends EventEmitter<LockClientEvents> implements RenewalTarget {
  /** Random id of this client; part of every owner id it creates. */
  readonly id = randomId(6);
  /** The options this client runs with, every default filled in. */
  readonly options: ResolvedClientOptions;
  readonly #redis: RedisPort;
  readonly #policy: CallPolicy;
  readonly #waiters: Waiters;
  readonly #holds = new Set<Hold>();
  readonly #deadlines = new DeadlineTimer<Hold>((hold) => {
    // The last lease's release was asked for within the lease: the section is
    // over, and that release reports how it ended.
    if (hold.releaseRequestedAt !== undefined && hold.releaseRequestedAt < hold.deadline) return;
    this.markLost(hold, hold.autoRenew && this.#renewer ? 'unreachable' : 'expired');
  });
  readonly #acquireContext: AcquireContext;
  readonly #lockHost: LockHost;
  readonly #leaseHost: LeaseHost;
  readonly #holdHost: HoldHost;
  readonly #connection: ConnectionEpoch;
  readonly #keyPrefix: string;
  readonly #serverCheck: ServerCheck;
  readonly #multiHost: MultiLockHost;
  readonly #semaphoreHost: SemaphoreHost;
  readonly #registration: ClientRegistration;
  #renewer: Renewer | undefined;
  #closed = false;
  readonly #closeListeners = new Set<() => void>();
  #electionEngine: ElectionEngine | undefined;

  constructor(client: RedisLike, options?: LockClientOptions) {
    super();
    const redis = requirePort('redis', client);
    this.#redis = redis;
    this.options = resolveClientOptions(options);
    this.#policy = {
      commandTimeoutMs: this.options.commandTimeoutMs,
      retries: this.options.retries,
      // A Cluster with no reachable node refuses calls at once (RedisUnreachableError).
      reachable: () => this.#connection.reachable(),
    };
    const onError = (error: unknown) => this.#emit('error', error);
    this.#waiters = new Waiters(redis, {
      lingerMs: this.options.subscriptionLingerMs,
      timeoutMs: this.options.commandTimeoutMs,
      onError,
    });
    this.#acquireContext = {
      redis,
      policy: this.#policy,
      waiters: this.#waiters,
      handoffTimeoutMs: this.options.handoffTimeoutMs,
      replication:
        this.options.minReplicas > 0
          ? { replicas: this.options.minReplicas, timeoutMs: this.options.replicaTimeoutMs }
          : undefined,
      marginMs: (ms) => driftMarginMs(ms, this.options.driftFactor),
      isClosed: () => this.#closed,
      cancel: (keys, owner, requestId, kind) => this.#cancel(keys, owner, requestId, kind),
      onError,
    };
    this.#lockHost = {
      acquire: (lock, opts, mode) => this.#acquire(lock, opts, mode),
      withLock: (lock, fn, opts) => this.#withLock(lock, fn, opts),
      inspect: (lock) => this.#inspect(lock),
      forceRelease: (lock) => this.#forceRelease(lock),
    };
    this.#leaseHost = {
      releaseLease: (lease, hold) =>
        this.#closed
          ? Promise.reject(new ClientClosedError())
          : traceRelease(this.id, hold, lease.token, () => releaseLease(this.#holdHost, lease, hold, true)),
      disposeLease: (lease, hold) => traceRelease(this.id, hold, lease.token, () => releaseLease(this.#holdHost, lease, hold, false)),
      extendLease: (lease, hold, ms) =>
        this.#closed
          ? Promise.reject(new ClientClosedError())
          : traceExtend(this.id, hold, ms, () => extendLease(this.#holdHost, hold, ms)),
      sweepExpired: () => this.#deadlines.sweep(),
    };
    this.#holdHost = {
      ctx: this.#acquireContext,
      driftFactor: this.options.driftFactor,
      connectionEpoch: () => this.#connection.current(),
      detachHold: (hold) => this.#detachHold(hold),
      endHold: (hold) => this.#endHold(hold),
      deadlineMoved: (hold) => this.#deadlines.update(hold),
      markLost: (hold, reason) => this.markLost(hold, reason),
      sweepExpired: () => this.#deadlines.sweep(),
      emit: (event, build) => emitLazily(this, event, build),
      newLease: (hold) => new Lease(this.#leaseHost, hold, hold.count),
    };
    this.#connection = watchConnection(redis);
    this.#keyPrefix = redis.keyPrefix;
    // One attempt, no retries: a server that does not answer fails the
    // acquisition itself, which reports it; the check must not double that wait.
    const checkPolicy = { commandTimeoutMs: this.options.commandTimeoutMs, retries: 0 };
    this.#serverCheck = new ServerCheck(redis, this.options.evictionCheck, checkPolicy, this.#connection.current, onError);
    this.#registration = new ClientRegistration(redis, this.options.prefix, this.id, this.options.name);
    this.#multiHost = {
      ctx: this.#acquireContext,
      clientId: this.id,
      driftFactor: this.options.driftFactor,
      prepare: (leaseMs) => this.#prepare(leaseMs),
      acquirePart: (lock, options, mode, group) => this.#acquire(lock, options, mode, group),
      adopt: (hold, waitedMs) => this.#adopt(hold, waitedMs),
      isOwned: (lock) => currentOwner(this.#scopeKey(lock)) !== undefined,
      runOwning: (holds, fn) => this.#runOwning(holds, fn),
      connectionEpoch: () => this.#connection.current(),
    };
    this.#semaphoreHost = {
      ctx: this.#acquireContext,
      holdHost: this.#holdHost,
      leaseHost: this.#leaseHost,
      clientId: this.id,
      driftFactor: this.options.driftFactor,
      leaseMs: this.options.leaseMs,
      assertOpen: () => this.#assertOpen(),
      serverReady: () => this.#serverReady(),
      renewer: () => this.#renewer,
      adopt: (hold, renewer) => {
        this.#holds.add(hold);
        this.#deadlines.add(hold);
        if (hold.autoRenew) renewer!.watch(hold);
      },
      emitAcquired: (build) => this.#emitLazily('acquired', build),
      forceReleased: (keys) => this.#forceReleased(keys.lock),
    };
  }

  /** A lock by name (no I/O). Names: non-empty strings of at most 1024 UTF-8 bytes, braces allowed. */
  lock(name: string): Lock {
    this.#assertOpen();
    return new Lock(this.#lockHost, validate.lockName(name), lockKeys(this.options.prefix, name, this.#keyPrefix));
  }

  /**
   * A multi-lock over several names (no I/O): all of them or none, one
   * `MultiLease`. Each name is an ordinary lock (it excludes `lock(name)`).
   * A name given twice is taken once. See the README's "Multi-lock".
   */
  multiLock(names: readonly string[]): MultiLock {
    this.#assertOpen();
    return new MultiLock(this.#multiHost, validate.lockNames(names).map((name) => this.lock(name)));
  }

  /**
   * A read-write lock by name (no I/O): `read` is shared by any number of
   * readers, `write` is exclusive; each side has the `Lock` API. Names as
   * for `lock()`; a read-write lock and a mutex of the same name are distinct.
   */
  readWriteLock(name: string): ReadWriteLock {
    this.#assertOpen();
    const keys = lockKeys(this.options.prefix, validate.lockName(name), this.#keyPrefix, 'r');
    return new ReadWriteLock(
      new Lock(this.#lockHost, name, keys, READ),
      new Lock(this.#lockHost, name, keys, WRITE),
      new Lock(this.#lockHost, name, keys, READ_WRITE),
    );
  }

  /**
   * A semaphore by name (no I/O): at most `options.permits` permits held at
   * once, each holder's by a lease that expires. The count is stored with the
   * semaphore in Redis on first use; a client given another count gets
   * `PermitCountMismatchError`. Names as for `lock()`; a semaphore and a lock
   * of the same name are independent.
   */
  semaphore(name: string, options: SemaphoreOptions): Semaphore {
    this.#assertOpen();
    const { permits } = resolveSemaphoreOptions(options);
    const keys = semaphoreKeys(this.options.prefix, validate.lockName(name), this.#keyPrefix);
    return new Semaphore(this.#semaphoreHost, name, keys, permits);
  }

  /**
   * A leader election by name (no I/O): `campaign()` to stand, `leader()` and
   * `observe()` to follow it from any client. A term lasts `options.termMs`
   * on the server without renewal (default: the watchdog's `timeoutMs`, else
   * `leaseMs`). Names as for `lock()`; an election and a lock of the same
   * name are independent.
   */
  election(name: string, options?: ElectionOptions): Election {
    this.#assertOpen();
    const { termMs } = resolveElectionOptions(options);
    const keys = electionKeys(this.options.prefix, validate.lockName(name), this.#keyPrefix);
    return new Election(this.#forElection(), name, keys, termMs);
  }

  /** Leases this client holds now (one per owner and lock, one per semaphore lease). */
  get heldCount(): number {
    return this.#holds.size;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Stops the client: waiting acquisitions reject with `ClientClosedError`,
   * pub/sub is unsubscribed, timers are cleared and an attached watchdog is
   * stopped. Every lease still held ends at once: its `signal` aborts with a
   * `ClientClosedError`, `lost` is emitted with reason `closed`, and a
   * `withLock` still running rejects with `ClientClosedError`. Those locks
   * stay in Redis until their TTL runs out unless `{ release: true }`, which
   * frees them (after their signals aborted) before `close()` resolves. The
   * user's Redis client stays open.
   */
  async close(options?: CloseOptions): Promise<void> {
    if (this.#closed) return;
    const { release } = resolveCloseOptions(options);
    const holds = [...this.#holds];
    this.#closed = true;
    for (const listener of [...this.#closeListeners]) listener();
    this.#closeListeners.clear();
    this.#connection.stop();
    this.#registration.stop();
    // Every section learns first, then the locks are freed (when asked).
    for (const hold of holds) this.#endByClose(hold);
    this.#renewer?.targetClosed();
    this.#renewer = undefined;
    this.#deadlines.clear();
    this.#holds.clear();
    if (release) {
      await Promise.allSettled(
        holds.map((hold) =>
          releaseHold(this.#acquireContext, hold, { all: true }).catch((error: unknown) => {
            this.#emit('error', error);
          }),
        ),
      );
    }
    await this.#waiters.close();
  }

  // ---- RenewalTarget: the watchdog's view ----

  attachRenewer(renewer: Renewer): void {
    this.#assertOpen();
    if (this.#renewer && this.#renewer !== renewer) {
      throw new InvalidArgumentError('This client already has a watchdog; stop it first');
    }
    this.#renewer = renewer;
  }

  detachRenewer(renewer: Renewer): void {
    if (this.#renewer === renewer) this.#renewer = undefined;
  }

  renewHolds(holds: readonly RenewalHold[]): Promise<RenewalResult[]> {
    return traceRenewal(this.id, holds.length, () =>
      renewHolds(this.#redis, this.#policy, holds as readonly Hold[], this.#acquireContext.replication),
    );
  }

  confirmRenewal(hold: RenewalHold, startedAt: number): void {
    const h = hold as Hold;
    if (h.ended) return;
    h.deadline = Math.max(h.deadline, startedAt + h.leaseMs - driftMarginMs(h.leaseMs, this.options.driftFactor));
    this.#deadlines.update(h);
  }

  markLost(hold: RenewalHold, reason: LostReason, cause?: unknown): void {
    const h = hold as Hold;
    if (h.ended) return;
    this.#endHold(h);
    const error = new LockLostError(h.name, h.token, reason, cause === undefined ? undefined : { cause });
    h.lostError = error;
    h.abort(error);
    this.#lost(h, reason, error);
    if (h.autoRenew) this.#renewer?.lost(h, error);
    if ((reason === 'expired' || reason === 'unreachable') && !this.#closed) {
      // A renewal that timed out here may still run on the server later and
      // keep the key alive for nobody: send our own release after it. Queued
      // on the hold, so it never overtakes a call still in flight (a hand-off
      // confirmation, a re-entry): whatever that call did, the release undoes
      // it, and nothing it did is undone before it was answered.
      void h.serialize(() => this.#cancel(h.keys, h.owner, undefined, h.kind));
    }
  }

  sweepExpired(): void {
    this.#deadlines.sweep();
  }

  // ---- internals ----

  /** What an election needs of this client, in one object (made once). */
  #forElection(): ElectionEngine {
    return (this.#electionEngine ??= {
      ...this.#acquireContext,
      clientId: this.id,
      options: this.options,
      driftFactor: this.options.driftFactor,
      assertOpen: () => this.#assertOpen(),
      serverReady: () => this.#serverReady(),
      emitLazily: (event, build) => emitLazily(this, event, build),
      renewer: () => this.#renewer,
      onClose: (listener) => {
        this.#closeListeners.add(listener);
        return () => this.#closeListeners.delete(listener);
      },
      connectionEpoch: () => this.#connection.current(),
      adopt: (hold, renewer) => {
        this.#holds.add(hold);
        this.#deadlines.add(hold);
        if (hold.autoRenew) renewer!.watch(hold);
      },
      endHold: (hold) => this.#endHold(hold),
      deadlineMoved: (hold) => this.#deadlines.update(hold),
      markLost: (hold, reason) => this.markLost(hold, reason),
      sweepExpired: () => this.#deadlines.sweep(),
    });
  }

  #emit<K extends keyof LockClientEvents>(event: K, ...args: LockClientEvents[K]): void {
    emitSafely(this, event, args);
  }

  /** #emit with a payload built only when someone listens (acquire and release emit every time). */
  #emitLazily<K extends 'acquired' | 'lost'>(event: K, build: () => LockClientEvents[K][0]): void {
    emitLazily(this, event, build);
  }

  #assertOpen(): void {
    if (this.#closed) throw new ClientClosedError();
  }

  #scopeKey(lock: Lock, kind: LockKind = lock.kind): string {
    // The mutex's scope key is unchanged; a side of a read-write lock has its own.
    return kind === MUTEX ? `${this.id}\u0000${lock.name}` : `${this.id}\u0001${kind.role}\u0000${lock.name}`;
  }

  /**
   * The enclosing holds of the other side of a read-write lock: a read inside
   * this chain's write hold is a downgrade (granted at once, on the writer's
   * owner id); a write inside its read hold would wait for itself.
   */
  #downgradeVia(lock: Lock): string | undefined {
    if (lock.kind === READ) return currentOwner(this.#scopeKey(lock, WRITE))?.owner;
    if (lock.kind === WRITE && currentOwner(this.#scopeKey(lock, READ))) throw new LockUpgradeError(lock.name);
    return undefined;
  }

  /** Ends a hold at close(): reported like a loss, with ClientClosedError as the signal's reason. */
  #endByClose(hold: Hold): void {
    if (hold.ended) return;
    this.#endHold(hold);
    const closed = new ClientClosedError();
    const error = new LockLostError(hold.name, hold.token, 'closed', { cause: closed });
    hold.lostError = error;
    hold.abort(closed);
    this.#lost(hold, 'closed', error);
  }

  /** Reports a lost hold: the `lost` event and the `holdfast:lost` channel. */
  #lost(hold: Hold, reason: LostReason, error: LockLostError): void {
    this.#emitLazily('lost', () => hold.eventPayload({ name: hold.name, token: hold.token, reason, error }));
    publishLost(this.id, hold, reason, error);
  }

  /**
   * What every acquisition awaits first: the eviction check. Once it passed,
   * the client registers itself (not awaited, but sent before the acquisition
   * that awaits this): nothing is written to a server the check refuses.
   */
  #serverReady(): Promise<void> | undefined {
    const checked = this.#serverCheck.ready();
    if (!checked) {
      this.#registration.start();
      return undefined;
    }
    return checked.then(() => this.#registration.start());
  }

  #endHold(hold: Hold): void {
    hold.ended = true;
    this.#detachHold(hold);
  }

  #detachHold(hold: Hold): void {
    this.#holds.delete(hold);
    this.#deadlines.delete(hold);
    if (hold.autoRenew) this.#renewer?.unwatch(hold);
  }

  #acquire(lock: Lock, options: unknown, mode: 'wait' | 'try', group?: readonly string[]): Promise<Lease | null> {
    return traceAcquire(
      () => ({ name: lock.name, kind: telemetryKind(lock), mode, clientId: this.id, signal: callerSignal(options) }),
      () => this.#acquireNow(lock, options, mode, group),
      holdOf,
    );
  }

  async #acquireNow(lock: Lock, options: unknown, mode: 'wait' | 'try', group?: readonly string[]): Promise<Lease | null> {
    this.#assertOpen();
    const opts = resolveAcquireOptions(options);
    const started = performance.now();
    // Only a withLock frame of this lock (and this client) makes this chain an
    // owner; a bare acquire() is a new owner every time (see owner.ts).
    const ref = currentOwner(this.#scopeKey(lock));
    if (ref) return this.#reenter(ref, lock, opts.leaseMs, started);
    const via = this.#downgradeVia(lock);

    const evictionChecked = this.#serverReady();
    if (evictionChecked) await evictionChecked;
    const { leaseMs, renewer } = this.#leaseFor(opts.leaseMs);
    const deadline = opts.waitMs === undefined ? undefined : started + opts.waitMs;
    for (;;) {
      // 16 characters (96 random bits): with the request id in the token's field
      // name, a held lock's hash then fits Redis's 48-byte allocation class.
      const owner = this.id + randomId(6);
      const granted = await acquireLoop(this.#acquireContext, {
        name: lock.name,
        keys: lock.keys,
        owner,
        leaseMs,
        deadline,
        signal: opts.signal,
        mode,
        kind: lock.kind,
        via,
      });
      if (!granted) return null;
      const hold = new Hold({
        name: lock.name,
        keys: lock.keys,
        owner,
        token: granted.token,
        count: granted.holdCount,
        leaseMs,
        deadline: granted.claim
          ? granted.invokedAt + granted.claim.claimMs - driftMarginMs(granted.claim.claimMs, this.options.driftFactor)
          : granted.invokedAt + leaseMs - driftMarginMs(leaseMs, this.options.driftFactor),
        autoRenew: renewer !== undefined,
        group,
        kind: lock.kind,
      });
      if (this.#closed) {
        void this.#cancel(lock.keys, owner, undefined, lock.kind);
        throw new ClientClosedError();
      }
      if (performance.now() >= hold.deadline) {
        // The reply was read after the lease it granted had run out (the
        // event loop stalled in between): a rival may hold the lock already.
        // Never hand that lease out: undo what is left of it, then try again
        // while the caller's wait allows.
        await this.#cancel(lock.keys, owner, granted.requestId, lock.kind);
        if (mode === 'try') return null;
        if (deadline !== undefined && performance.now() >= deadline) {
          throw new LockTimeoutError(lock.name, Math.round(performance.now() - started));
        }
        opts.signal?.throwIfAborted();
        continue;
      }
      this.#holds.add(hold);
      this.#deadlines.add(hold);
      if (hold.autoRenew) renewer!.watch(hold);
      if (granted.claim) confirmHandoff(this.#holdHost, hold, granted.claim.requestId);
      const waitedMs = Math.round(performance.now() - started);
      this.#emitLazily('acquired', () =>
        hold.eventPayload({ name: lock.name, token: hold.token, holdCount: hold.count, waitedMs, reentrant: false }),
      );
      return new Lease(this.#leaseHost, hold, hold.count);
    }
  }

  /** The lease of an acquisition asking for `leaseMs`, and the watchdog renewing it (only when it names none). */
  #leaseFor(leaseMs: number | undefined): { leaseMs: number; renewer: Renewer | undefined } {
    const renewer = leaseMs === undefined ? this.#renewer : undefined;
    return { leaseMs: leaseMs ?? renewer?.timeoutMs ?? this.options.leaseMs, renewer };
  }

  /** What a multi-lock's same-slot group needs before its script call, as #acquire does first. */
  async #prepare(leaseMs: number | undefined): Promise<{ leaseMs: number; autoRenew: boolean }> {
    this.#assertOpen();
    const evictionChecked = this.#serverReady();
    if (evictionChecked) await evictionChecked;
    const lease = this.#leaseFor(leaseMs);
    return { leaseMs: lease.leaseMs, autoRenew: lease.renewer !== undefined };
  }

  /** Books a hold granted by a multi-lock's group script, as #acquire books its own. */
  #adopt(hold: Hold, waitedMs: number): Lease {
    this.#holds.add(hold);
    this.#deadlines.add(hold);
    if (hold.autoRenew) this.#renewer?.watch(hold);
    this.#emitLazily('acquired', () =>
      hold.eventPayload({ name: hold.name, token: hold.token, holdCount: hold.count, waitedMs, reentrant: false }),
    );
    return new Lease(this.#leaseHost, hold, hold.count);
  }

  /** Runs `fn` owning every hold in `holds` reentrantly (a multi-lock's withLock). */
  #runOwning<T>(holds: readonly Hold[], fn: () => T): T {
    const run = holds.reduceRight<() => T>(
      (inner, hold) => () => runOwning(`${this.id}\u0000${hold.name}`, { owner: hold.owner, isActive: () => hold.active }, inner),
      fn,
    );
    return run();
  }

  #reenter(ref: OwnerRef, lock: Lock, leaseMs: number | undefined, started: number): Promise<Lease> {
    const hold = [...this.#holds].find((h) => h.owner === ref.owner && h.name === lock.name);
    if (!hold) return Promise.reject(new LockNotHeldError(lock.name, 'the enclosing hold has ended'));
    return reenterHold(this.#holdHost, hold, leaseMs, started);
  }

  async #withLock<T>(lock: Lock, fn: (lease: Lease) => Promise<T> | T, options: unknown): Promise<T> {
    validate.fn('fn', fn);
    const lease = (await this.#acquire(lock, options, 'wait'))!;
    const hold = holdOf(lease);
    const ref: OwnerRef = { owner: hold.owner, isActive: () => hold.active };
    let result: T;
    try {
      result = await runOwning(this.#scopeKey(lock), ref, () => fn(lease));
    } catch (error) {
      await this.#leaseHost.disposeLease(lease, hold).catch((releaseError: unknown) => this.#emit('error', releaseError));
      throw error;
    }
    // Lenient: `fn` may have released its own lease. A loss is still an error,
    // and so is a close() while `fn` ran (the signal's reason says which).
    await this.#leaseHost.disposeLease(lease, hold);
    if (hold.lostError) throw hold.abortReason ?? hold.lostError;
    return result;
  }

  async #inspect(lock: Lock): Promise<{ pttl: number; token: number; foreign: boolean }> {
    this.#assertOpen();
    return inspectLock(this.#acquireContext, lock.keys, lock.kind);
  }

  async #forceRelease(lock: Lock): Promise<boolean> {
    this.#assertOpen();
    const outcome = await forceReleaseLock(this.#acquireContext, lock.keys, lock.kind);
    if (outcome.foreign) throw new KeyConflictError(lock.name);
    this.#forceReleased(lock.keys.lock, (hold) => lock.kind === READ_WRITE || hold.kind === lock.kind);
    return outcome.removed;
  }

  /** Ends this client's holds of `lockKey` that a force-release freed (`freed`: which kinds of holds it freed). */
  #forceReleased(lockKey: string, freed: (hold: Hold) => boolean = () => true): void {
    for (const hold of [...this.#holds]) {
      if (hold.keys.lock === lockKey && freed(hold)) this.markLost(hold, 'deleted');
    }
  }

  /**
   * Undoes what a request that will not be used may have left: its queue entry
   * and any hold it was granted (or, without a request id, every hold of the owner).
   */
  #cancel(keys: LockKeys, owner: string, requestId: string | undefined, kind: LockKind = MUTEX): Promise<void> {
    const allKeys = [keys.lock, keys.queue, keys.waiters, keys.fence];
    const claimMs = this.options.handoffTimeoutMs;
    const { calls } = kind;
    const run = () =>
      calls
        ? calls.cancel(this.#acquireContext, owner, requestId)
        : requestId === undefined
        ? runScript(this.#redis, kind.release, allKeys, [owner, randomId(), keys.channel, claimMs, '1'])
        : runScript(this.#redis, kind.cancel, allKeys, [owner, requestId, keys.channel, claimMs]);
    return callRedis(run, this.#policy).then(
      () => undefined,
      (error: unknown) => this.#emit('error', error),
    );
  }
}
