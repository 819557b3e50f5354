import { ClientClosedError, type LockLostError, type LostReason } from '../errors/errors.js';
import { lockKeys, type LockKeys } from '../keys/keys.js';
import { driftMarginMs, type ResolvedClientOptions } from '../options/options.js';
import * as validate from '../options/validate.js';
import type { RedisPort } from '../port/index.js';
import { callRedis, withinLimits, type CallPolicy } from '../port/redis-call.js';
import { TimeoutQueue } from '../port/timeout-queue.js';
import type { Replication } from '../scripts/index.js';
import { emitLazily, emitSafely, type ListenerSource, type LeaseEvents } from '../telemetry/events.js';
import { publishLost, traceRenewal } from '../telemetry/telemetry.js';
import { ClientRegistration } from './client-registry.js';
import { watchConnection, type ConnectionEpoch } from './connection-epoch.js';
import { HoldBook } from './hold-book.js';
import type { Hold } from './hold.js';
import type { AcquireContext, LockKind } from './kind.js';
import { runOwning } from './owner.js';
import { releaseHold } from './release.js';
import { renewHolds } from './renew.js';
import type { RenewalHold, RenewalResult, Renewer } from '../options/renewal.js';
import { ServerCheck } from './server-check.js';
import { Waiters } from './waiters.js';

/**
 * What every synchronizer of one `LockClient` shares, in one object: the
 * client port and its call policy, pub/sub waiting, the live holds and their
 * deadline timer, the connection epoch and the server check, the client's
 * registration, the link to a watchdog, events and telemetry, and `close()`.
 * Every kind (mutex, read-write lock, semaphore, multi-lock, election,
 * latch, barrier, run-once) receives this object, or the part of it its
 * folder declares, and asks it; nothing is wired per kind. `LockClient` is
 * the public face over it (see ARCHITECTURE.md).
 */
export class Engine implements AcquireContext {
  /** Random id of the client; the start of every owner id it makes. */
  readonly clientId: string;
  readonly options: ResolvedClientOptions;
  readonly redis: RedisPort;
  readonly policy: CallPolicy;
  readonly waiters: Waiters;
  readonly handoffTimeoutMs: number;
  readonly replication: Replication | undefined;
  readonly driftFactor: number;
  /** The user client's own key prefix (ioredis `keyPrefix`), which every key name must carry. */
  readonly keyPrefix: string;
  readonly #events: ListenerSource;
  /**
   * The live holds: their deadline timer, renewal, loss and close. The lease
   * layer and the kinds that book holds (grant, the election, the multi-lock)
   * use it directly.
   */
  readonly holds: HoldBook<Hold>;
  readonly #connection: ConnectionEpoch;
  readonly #serverCheck: ServerCheck;
  readonly #registration: ClientRegistration;
  readonly #closeListeners = new Set<() => void>();
  #closed = false;

  /** `events`: where events are emitted (the LockClient). */
  constructor(events: ListenerSource, redis: RedisPort, options: ResolvedClientOptions, clientId: string) {
    this.#events = events;
    this.clientId = clientId;
    this.options = options;
    this.redis = redis;
    this.keyPrefix = redis.keyPrefix;
    this.handoffTimeoutMs = options.handoffTimeoutMs;
    this.driftFactor = options.driftFactor;
    this.replication = options.minReplicas > 0 ? { replicas: options.minReplicas, timeoutMs: options.replicaTimeoutMs } : undefined;
    this.#connection = watchConnection(redis);
    this.policy = {
      commandTimeoutMs: options.commandTimeoutMs,
      retries: options.retries,
      // A Cluster with no reachable node refuses calls at once (RedisUnreachableError).
      reachable: () => this.#connection.reachable(),
      timeouts: new TimeoutQueue(options.commandTimeoutMs),
    };
    const onError = (error: unknown) => this.onError(error);
    this.waiters = new Waiters(redis, {
      lingerMs: options.subscriptionLingerMs,
      timeoutMs: options.commandTimeoutMs,
      onError,
      wait: options.wait,
      spinMinMs: options.spinMinMs,
      spinMaxMs: options.spinMaxMs,
      onWarning: (warning) => emitSafely(events, 'warning', [warning]),
    });
    // One attempt, no retries: a server that does not answer fails the
    // acquisition itself, which reports it; the check must not double that wait.
    const checkPolicy = { commandTimeoutMs: options.commandTimeoutMs, retries: 0 };
    this.#serverCheck = new ServerCheck(redis, options.evictionCheck, checkPolicy, this.#connection.current, onError);
    this.#registration = new ClientRegistration(redis, options.prefix, clientId, options.name);
    this.holds = new HoldBook<Hold>(options.driftFactor, 'client', (hold, reason, error) => this.#lost(hold, reason, error));
  }

  // ---- state every kind asks about ----

  isClosed(): boolean {
    return this.#closed;
  }

  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void {
    if (this.#closed) throw new ClientClosedError();
  }

  marginMs(ms: number): number {
    return driftMarginMs(ms, this.driftFactor);
  }

  /** Counts the user client's reconnections: a change during a call means it may have been resent. */
  connectionEpoch(): number {
    return this.#connection.current();
  }

  /**
   * What every acquisition awaits first: the eviction check. Once it passed,
   * the client registers itself (not awaited, but sent before the acquisition
   * that awaits this): nothing is written to a server the check refuses.
   * The check is shared by every acquisition of the client and bounded by
   * `commandTimeoutMs` alone: `deadline` (monotonic ms) and `signal` bound
   * this caller's wait for it (`RedisTimeoutError` at the deadline, the
   * signal's reason on its abort), so a wait against a server that does not
   * answer ends at its `waitMs`.
   */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined {
    const checked = this.#serverCheck.ready();
    if (!checked) {
      this.#registration.start();
      return undefined;
    }
    const registered = checked.then(() => this.#registration.start());
    return deadline === undefined && signal === undefined ? registered : withinLimits(registered, { deadline, signal });
  }

  /** A mutex's keys by name (the name validated). */
  lockKeys(name: string): LockKeys {
    return lockKeys(this.options.prefix, validate.lockName(name), this.keyPrefix);
  }

  /** A read-write lock's keys by name (the name validated). */
  readWriteKeys(name: string): LockKeys {
    return lockKeys(this.options.prefix, validate.lockName(name), this.keyPrefix, 'r');
  }

  /** The lease of an acquisition asking for `leaseMs`, and the watchdog renewing it (only when it names none). */
  leaseFor(leaseMs: number | undefined): { leaseMs: number; renewer: Renewer | undefined } {
    const renewer = leaseMs === undefined ? this.holds.renewer : undefined;
    return { leaseMs: leaseMs ?? renewer?.timeoutMs ?? this.options.leaseMs, renewer };
  }

  /** The attached watchdog, if any. */
  renewer(): Renewer | undefined {
    return this.holds.renewer;
  }

  // ---- events ----

  /** Reports a background failure (the `error` event). */
  onError(error: unknown): void {
    this.emit('error', error);
  }

  /** Emits to the client's listeners; a listener that throws never reaches the caller. */
  emit<K extends keyof LeaseEvents>(event: K, ...args: LeaseEvents[K]): void {
    emitSafely(this.#events, event, args);
  }

  /**
   * Emits with a payload built only when someone listens (acquire and release emit every time).
   * A kind's own events (the latch's, the barrier's) are typed by that kind's view of the engine.
   */
  emitLazily<K extends keyof LeaseEvents>(event: K, build: () => LeaseEvents[K][0]): void;
  emitLazily(event: string, build: () => unknown): void;
  emitLazily(event: string, build: () => unknown): void {
    emitLazily(this.#events, event, build);
  }

  // ---- the live holds ----

  /** Holds this client has now. */
  get heldCount(): number {
    return this.holds.size;
  }

  /** Ends this client's holds of `lockKey` that a force-release freed (`freed`: which holds it freed). */
  forceReleased(lockKey: string, freed: (hold: Hold) => boolean = () => true): void {
    for (const hold of this.holds.all()) {
      if (hold.keys.lock === lockKey && freed(hold)) this.holds.markLost(hold, 'deleted');
    }
  }

  /**
   * Undoes what a request that will not be used may have left: its queue entry
   * and any hold it was granted (or, without a request id, every hold of the owner).
   */
  cancel(keys: LockKeys, owner: string, requestId: string | undefined, kind: LockKind): Promise<void> {
    return callRedis(() => kind.calls.cancel(this, keys, owner, requestId), this.policy).then(
      () => undefined,
      (error: unknown) => this.onError(error),
    );
  }

  // ---- reentrancy ----

  /** The async-context key a chain owning lock `name` is found under (a side of a read-write lock has its own). */
  scopeKey(name: string, role: LockKind['role']): string {
    return role === 'lock' ? `${this.clientId}\u0000${name}` : `${this.clientId}\u0001${role}\u0000${name}`;
  }

  /** Runs `fn` owning every hold in `holds` reentrantly (a multi-lock's withLock). */
  runOwning<T>(holds: readonly Hold[], fn: () => T): T {
    const run = holds.reduceRight<() => T>(
      (inner, hold) => () => runOwning(this.scopeKey(hold.name, 'lock'), { owner: hold.owner, isActive: () => hold.active }, inner),
      fn,
    );
    return run();
  }

  // ---- the watchdog ----

  attachRenewer(renewer: Renewer): void {
    this.assertOpen();
    this.holds.attach(renewer);
  }

  detachRenewer(renewer: Renewer): void {
    this.holds.detachRenewer(renewer);
  }

  renewHolds(holds: readonly RenewalHold[]): Promise<RenewalResult[]> {
    return traceRenewal(this.clientId, holds.length, () => renewHolds(this.redis, this.policy, holds as readonly Hold[], this.replication));
  }

  confirmRenewal(hold: RenewalHold, startedAt: number): void {
    this.holds.confirmRenewal(hold as Hold, startedAt);
  }

  // ---- close ----

  /** Calls `listener` at the start of `close()` (a kind's own waits end there); returns its removal. */
  onClose(listener: () => void): () => void {
    if (this.#closed) {
      // Registered after close() began (an operation that started just before it): it still ends.
      queueMicrotask(() => {
        try {
          listener();
        } catch (error) {
          this.onError(error);
        }
      });
      return () => false;
    }
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  /** See `LockClient.close()`. */
  async close(release: boolean): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#connection.stop();
    this.#registration.stop();
    for (const listener of [...this.#closeListeners]) {
      try {
        listener();
      } catch (error) {
        this.onError(error);
      }
    }
    this.#closeListeners.clear();
    // Every section learns first, then the locks are freed (when asked).
    const holds = this.holds.closeAll();
    if (release) {
      await Promise.allSettled(holds.map((hold) => releaseHold(this, hold, true).catch((error: unknown) => this.onError(error))));
    }
    await this.waiters.close();
    // Calls still out keep their timeouts (they end on their own); an idle queue lets go of its timer.
    this.policy.timeouts?.clearIdle();
  }

  /** Reports a lost hold: the `lost` event and the `holdfast:lost` channel. */
  #lost(hold: Hold, reason: LostReason, error: LockLostError): void {
    this.emitLazily('lost', () => hold.eventPayload({ name: hold.name, token: hold.token, reason, error }));
    publishLost(this.clientId, hold, reason, error);
    if ((reason === 'expired' || reason === 'unreachable') && !this.#closed) {
      // A renewal that timed out here may still run on the server later and
      // keep the key alive for nobody: send our own release after it. Queued
      // on the hold, so it never overtakes a call still in flight (a hand-off
      // confirmation, a re-entry): whatever that call did, the release undoes
      // it, and nothing it did is undone before it was answered.
      void hold.serialize(() => this.cancel(hold.keys, hold.owner, undefined, hold.kind));
    }
  }
}
