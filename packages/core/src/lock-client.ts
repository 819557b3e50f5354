import { EventEmitter } from 'eventemitter3';
import { newBarrier, type Barrier } from './barrier/barrier.js';
import type { BarrierOptions } from './barrier/barrier-options.js';
import { newElection, type Election } from './election/election.js';
import type { ElectionOptions } from './election/election-options.js';
import { Engine } from './engine/engine.js';
import type { Hold } from './engine/hold.js';
import { randomId } from './engine/owner.js';
import type { LostReason, PubSubRefusedError } from './errors/errors.js';
import { newIdempotency, type Idempotency } from './idempotency/idempotency.js';
import { newInbox, type Inbox } from './inbox/inbox.js';
import type { InboxOptions } from './inbox/inbox-options.js';
import type { IdempotencyOptions } from './idempotency/idempotency-options.js';
import { SingleFlights, type FlightClaim, type SingleFlightOptions } from './idempotency/single-flight.js';
import { newCountDownLatch, type CountDownLatch } from './latch/latch.js';
import type { CountDownLatchOptions } from './latch/latch-options.js';
import { newMultiLock, type MultiLock } from './multi-lock/multi-lock.js';
import { newLock, type Lock } from './mutex/lock.js';
import { resolveClientOptions, resolveCloseOptions, type CloseOptions, type LockClientOptions, type ResolvedClientOptions } from './options/options.js';
import type { RenewalHold, RenewalResult, RenewalTarget, Renewer } from './options/renewal.js';
import { requirePort } from './port/index.js';
import type { RedisLike } from './port/redis-like.js';
import { newReadWriteLock, type ReadWriteLock } from './read-write/read-write-lock.js';
import { RunOnce } from './run-once/run-once.js';
import type { RunCoordinatorLike, RunOnceClaim, RunOnceOptions, RunOnceResult } from './run-once/run-once-options.js';
import { newSemaphore, type Semaphore } from './semaphore/semaphore.js';
import type { SemaphoreOptions } from './semaphore/semaphore-options.js';
import type { BarrierEvents } from './barrier/barrier-calls.js';
import type { LatchEvents } from './latch/latch-calls.js';
import type { LeaseEvents } from './telemetry/events.js';

/** Events of a `LockClient` (and, but `warning`, of a `Redlock`), event → listener arguments. */
export interface LockClientEvents extends LeaseEvents, LatchEvents, BarrierEvents {
  /**
   * Something the client works around, said once: with `wait: 'auto'`, the
   * server refused pub/sub and the client spins from now on (`PubSubRefusedError`).
   * Not an `error`: every call goes on working.
   */
  warning: [warning: PubSubRefusedError];
}

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
  // Everything the synchronizers share (engine/engine.ts); this class is its public face.
  readonly #engine: Engine;
  #runOnce: RunOnce | undefined;
  #singleFlights: SingleFlights | undefined;

  constructor(client: RedisLike, options?: LockClientOptions) {
    super();
    const redis = requirePort('redis', client);
    this.options = resolveClientOptions(options);
    this.#engine = new Engine(this, redis, this.options, this.id);
  }

  /** A lock by name (no I/O). Names: non-empty strings of at most 1024 UTF-8 bytes, braces allowed. */
  lock(name: string): Lock {
    return newLock(this.#engine, name);
  }

  /**
   * A multi-lock over several names (no I/O): all of them or none, one
   * `MultiLease`. Each name is an ordinary lock (it excludes `lock(name)`).
   * A name given twice is taken once. See the README's "Multi-lock".
   */
  multiLock(names: readonly string[]): MultiLock {
    return newMultiLock(this.#engine, names);
  }

  /**
   * A read-write lock by name (no I/O): `read` is shared by any number of
   * readers, `write` is exclusive; each side has the `Lock` API. Names as
   * for `lock()`; a read-write lock and a mutex of the same name are distinct.
   */
  readWriteLock(name: string): ReadWriteLock {
    return newReadWriteLock(this.#engine, name);
  }

  /**
   * A semaphore by name (no I/O): at most `options.permits` permits held at
   * once, each holder's by a lease that expires. The count is stored with the
   * semaphore in Redis on first use; a client given another count gets
   * `PermitCountMismatchError`. Names as for `lock()`; a semaphore and a lock
   * of the same name are independent.
   */
  semaphore(name: string, options: SemaphoreOptions): Semaphore {
    return newSemaphore(this.#engine, name, options);
  }

  /**
   * A leader election by name (no I/O): `campaign()` to stand, `leader()` and
   * `observe()` to follow it from any client. A term lasts `options.termMs`
   * on the server without renewal (default: the watchdog's `timeoutMs`, else
   * `leaseMs`). Names as for `lock()`; an election and a lock of the same
   * name are independent.
   */
  election(name: string, options?: ElectionOptions): Election {
    return newElection(this.#engine, name, options);
  }

  /**
   * A count-down latch by name (no I/O): `trySetCount(n)` arms it, each
   * `countDown()` takes one off, and every `wait()` returns once it is 0.
   * Its keys expire `options.ttlMs` after its last change. Names as for
   * `lock()`; a latch and a lock of the same name are independent.
   */
  countDownLatch(name: string, options?: CountDownLatchOptions): CountDownLatch {
    return newCountDownLatch(this.#engine, name, options);
  }

  /**
   * A cyclic barrier by name (no I/O): the `options.parties`-th arrival trips
   * it for every party waiting. The count is stored with the barrier in Redis
   * on first use; a client given another count gets `PartyCountMismatchError`.
   * Names as for `lock()`; a barrier and a lock of the same name are independent.
   */
  barrier(name: string, options: BarrierOptions): Barrier {
    return newBarrier(this.#engine, name, options);
  }

  /**
   * Runs `fn` here if no process has claimed `key` yet, and claims it for
   * every process for `options.ttlMs` from now (and as long as `fn` runs: the
   * claim is renewed). Resolves `{ ran: true, result }` where `fn` ran,
   * `{ ran: false }` where the key was claimed already; where `fn` throws, it
   * rejects with that error and the key stays claimed. Keys as lock names.
   * See the README's "Run once".
   */
  runOnce<T>(key: string, fn: (claim: RunOnceClaim) => T | Promise<T>, options?: RunOnceOptions): Promise<RunOnceResult<Awaited<T>>> {
    return this.#runOnceKind().run(key, fn, options);
  }

  /**
   * node-cron's run coordinator (node-cron ≥ 4.6: a task's `runCoordinator`
   * option, or `cron.setRunCoordinator()`), on `runOnce`'s claims:
   * `shouldRun(key, ttlMs)` claims the firing's key and resolves true in the
   * one process that won it; `onComplete(key)` only stops the claim's renewal
   * (the key stays claimed until its ttl, so an instance firing late skips).
   */
  runCoordinator(): RunCoordinatorLike {
    this.#engine.assertOpen();
    return this.#runOnceKind().coordinator();
  }

  /**
   * Idempotency keys by name (no I/O): `run(requestKey, fn, { fingerprint })`
   * runs `fn` once per request key across every process and stores its result
   * for `options.ttlMs`; every other call of the key, concurrent (it waits,
   * woken over pub/sub) or later, gets that result with `replayed: true`. A
   * key reused with another fingerprint is refused. Names as for `lock()`.
   * See the README's "Idempotency keys".
   */
  idempotency<T = unknown>(name: string, options?: IdempotencyOptions<T>): Idempotency<T> {
    return newIdempotency<T>(this.#engine, name, options);
  }

  /**
   * A per-key inbox by name (no I/O): `post(key, message)` stores a message
   * in the key's durable FIFO; one process at a time per key (the one that
   * posted to it idle, or that recovered it) calls `options.handler` with its
   * messages in post order, under a renewed lease with a fencing token. A
   * message is removed only once its call resolved. Names as for `lock()`.
   * See the README's "Per-key inbox".
   */
  inbox<T = unknown>(name: string, options?: InboxOptions<T>): Inbox<T> {
    return newInbox<T>(this.#engine, name, options);
  }

  /**
   * Runs `fn` once for all the concurrent calls of `key`, in this process and
   * every other: the first call runs it, the others wait (woken over pub/sub)
   * and get its value, or its error (the same object in this process, a
   * `SingleFlightError` with its name, message and code elsewhere). A call
   * after completion starts a new flight: nothing is cached. A call whose
   * `options.waitMs` runs out rejects with `LockTimeoutError` and the flight
   * goes on. Keys as lock names. See the README's "Single-flight".
   */
  singleFlight<T>(key: string, fn: (claim: FlightClaim) => T | Promise<T>, options?: SingleFlightOptions): Promise<Awaited<T>> {
    this.#singleFlights ??= new SingleFlights(this.#engine);
    return this.#singleFlights.run(key, fn, options);
  }

  /** Leases this client holds now (one per owner and lock, one per semaphore lease). */
  get heldCount(): number {
    return this.#engine.heldCount;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#engine.isClosed();
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
    if (this.#engine.isClosed()) return;
    const { release } = resolveCloseOptions(options);
    await this.#engine.close(release);
  }

  /** The run-once kind, made on first use. */
  #runOnceKind(): RunOnce {
    return (this.#runOnce ??= new RunOnce(this.#engine));
  }

  // ---- RenewalTarget: the watchdog's view ----

  attachRenewer(renewer: Renewer): void {
    this.#engine.attachRenewer(renewer);
  }

  detachRenewer(renewer: Renewer): void {
    this.#engine.detachRenewer(renewer);
  }

  renewHolds(holds: readonly RenewalHold[]): Promise<RenewalResult[]> {
    return this.#engine.renewHolds(holds);
  }

  confirmRenewal(hold: RenewalHold, startedAt: number): void {
    this.#engine.confirmRenewal(hold, startedAt);
  }

  markLost(hold: RenewalHold, reason: LostReason, cause?: unknown): void {
    this.#engine.holds.markLost(hold as Hold, reason, cause);
  }

  sweepExpired(): void {
    this.#engine.holds.sweepExpired();
  }
}
