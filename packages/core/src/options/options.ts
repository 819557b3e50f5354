import * as v from './validate.js';

/** Options of `new LockClient(redis, options)`. */
export interface LockClientOptions {
  /**
   * Prepended to every key and channel, so several applications can share one Redis.
   * No `{` or `}`: holdfast places its own hash tag.
   * @default 'holdfast'
   */
  readonly prefix?: string;
  /**
   * Lease of an acquisition that names none, in ms. Through a client with a
   * watchdog, acquisitions without `leaseMs` use the watchdog's `timeoutMs` instead.
   * @default 30_000
   */
  readonly leaseMs?: number;
  /**
   * Longest wait for one Redis reply, in ms. A hung server fails a call with
   * `RedisTimeoutError` after this, and transient failures are retried.
   * @default 5_000
   */
  readonly commandTimeoutMs?: number;
  /**
   * Retries of a transient Redis failure (connection reset, timeout, READONLY)
   * for calls without a wait deadline (release, extend, inspection, and
   * `acquire()` without `waitMs`). With `waitMs`, retries continue until it ends.
   * @default 3
   */
  readonly retries?: number;
  /**
   * How long a lock handed to the next waiter on release stays reserved for it,
   * in ms, before the waiter confirms. A waiter that died meanwhile blocks the
   * lock at most this long; its queue entry outlives the holder's lease by as much.
   * @default 2_000
   */
  readonly handoffTimeoutMs?: number;
  /**
   * Share of the lease kept back for clock drift between this process and Redis:
   * a lease is reported lost `leaseMs × driftFactor + 2` ms before Redis expires it.
   * @default 0.01
   */
  readonly driftFactor?: number;
  /**
   * How long a lock channel stays subscribed after its last waiter left, in ms,
   * so that steady contention costs no SUBSCRIBE/UNSUBSCRIBE round trips.
   * @default 10_000
   */
  readonly subscriptionLingerMs?: number;
  /**
   * Replicas that must acknowledge an acquisition, re-entry, extension or
   * renewal (Redis `WAIT`) before it counts. With fewer acknowledgements within
   * `replicaTimeoutMs` an acquisition is undone and rejects with
   * `ReplicationError`, an extension rejects with it, and a renewal counts as
   * failed. Without it, a failover to a replica that had not yet received the
   * write can hand the same lock to a second owner.
   * @default 0
   */
  readonly minReplicas?: number;
  /**
   * Longest wait for `minReplicas` acknowledgements, in ms (the `WAIT` timeout).
   * @default 1_000
   */
  readonly replicaTimeoutMs?: number;
  /**
   * What to do when the server evicts keys (`maxmemory` set and a
   * `maxmemory-policy` other than `noeviction`): eviction can drop a held
   * lock (a rival then takes it) or a fencing counter (tokens go backwards).
   * Checked with `INFO memory` before the first acquisition, and again after
   * a reconnection. `'refuse'`: acquisitions reject with `EvictionPolicyError`;
   * `'warn'`: the error is emitted once as an `error` event and locks work;
   * `'off'`: no check (for a server you know never reaches its `maxmemory`).
   * @default 'refuse'
   */
  readonly evictionCheck?: EvictionCheck;
  /**
   * A name for this client that people read: the `holdfast` CLI shows it as
   * the holder of this client's locks, with the host and process id. The
   * client registers it once in `<prefix>:client:<id>` (an expiring key,
   * refreshed while the client is open), never per lock.
   * @default none: the holder shows as host and process id
   */
  readonly name?: string;
  /**
   * How waits learn that a lock (or a latch, a barrier, a result, an inbox, an
   * election) changed. `'pubsub'`: over a subscriber connection (one
   * `duplicate()` of your client), woken by the releases' messages. `'spin'`:
   * no subscriber and no `SUBSCRIBE` at all; a waiter looks again after
   * `spinMinMs` to `spinMaxMs` (growing backoff, full jitter), for proxies and
   * ACLs without pub/sub. FIFO order and hand-off are the same in both.
   * `'auto'`: pub/sub; when the server refuses the subscription (an error
   * reply such as `NOPERM`, or a subscription never confirmed while the server
   * answers other commands), the client spins for good and emits `warning` once.
   * @default 'auto'
   */
  readonly wait?: WaitMode;
  /**
   * Shortest sleep of a spinning waiter between two looks, in ms
   * (`wait: 'spin'`, or `'auto'` once pub/sub was refused).
   * @default 10, or `spinMaxMs` when that is smaller
   */
  readonly spinMinMs?: number;
  /**
   * Longest sleep of a spinning waiter between two looks, in ms. At most half
   * of `handoffTimeoutMs`: a waiter handed the lock must look again (and
   * confirm) before the hand-off's claim runs out.
   * @default 100, or half of `handoffTimeoutMs` when that is smaller
   */
  readonly spinMaxMs?: number;
}

/** See `LockClientOptions.evictionCheck`. */
export type EvictionCheck = 'refuse' | 'warn' | 'off';

/** See `LockClientOptions.wait`. */
export type WaitMode = 'pubsub' | 'spin' | 'auto';

/** Options of `lock.acquire()`. */
export interface AcquireOptions {
  /** Lease in ms. @default the client's `leaseMs` (or the watchdog's `timeoutMs`, renewed) */
  readonly leaseMs?: number;
  /** Longest wait in ms; `LockTimeoutError` after it. @default wait until acquired */
  readonly waitMs?: number;
  /** Aborting it stops the wait; the promise rejects with `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** Options of `lock.tryAcquire()`. */
export interface TryAcquireOptions {
  /** Lease in ms. @default the client's `leaseMs` (or the watchdog's `timeoutMs`, renewed) */
  readonly leaseMs?: number;
}

/** Options of `lock.withLock()`: those of `acquire()`. */
export type WithLockOptions = AcquireOptions;

/**
 * The lease contract every holdfast lock implementation honours
 * (`Lease` from this package, `RedlockLease` from @holdfast/redlock).
 */
export interface LeaseLike extends AsyncDisposable {
  /** The lock name. */
  readonly name: string;
  /** Fencing token: strictly greater than every token issued before for this name; equal on re-entry. */
  readonly token: number;
  /** Holds of this owner right after this acquisition (1 for the outer one). */
  readonly holdCount: number;
  /** Aborts, with a `LockLostError` (or `ClientClosedError`) as its reason, when the lease ends unreleased. */
  readonly signal: AbortSignal;
  /** True until the lease is released or lost. */
  readonly isHeld: boolean;
  /** The lease length renewals and extensions use, in ms. */
  readonly leaseMs: number;
  /** Drops this hold; `LockNotHeldError` if it was released already or lost. */
  release(): Promise<void>;
  /** Resets the remaining lease to `leaseMs` (default: the lease length); `LockLostError` if lost. */
  extend(leaseMs?: number): Promise<void>;
}

/** The lock contract every holdfast lock implementation honours. */
export interface LockLike<L extends LeaseLike = LeaseLike> {
  /** The lock name. */
  readonly name: string;
  /** Waits for the lock: `LockTimeoutError` after `waitMs`, `signal.reason` on abort. */
  acquire(options?: AcquireOptions): Promise<L>;
  /** Takes the lock if it is free, without waiting: `null` when busy. */
  tryAcquire(options?: TryAcquireOptions): Promise<L | null>;
  /** Acquires, runs `fn` with the lease, and releases whatever `fn` does. */
  withLock<T>(fn: (lease: L) => Promise<T> | T, options?: WithLockOptions): Promise<T>;
  /** Whether anyone holds the lock now. */
  isLocked(): Promise<boolean>;
  /** The holder's remaining lease in ms; 0 when free. */
  remainingTtlMs(): Promise<number>;
  /** Frees the lock whoever holds it; `true` if a lock was removed. */
  forceRelease(): Promise<boolean>;
}

/** Options of `latch.wait()` and `latch.countDownAndWait()`, and of the waits of a barrier. */
export interface SyncWaitOptions {
  /** The longest wait, in ms: then `LockTimeoutError`. @default no limit */
  readonly waitMs?: number;
  /** Ends the wait with `signal.reason` when it aborts. */
  readonly signal?: AbortSignal;
}

/** Options of `client.close()`. */
export interface CloseOptions {
  /** Release every lease this client holds before closing. @default false */
  readonly release?: boolean;
}

/** A client's options with every default filled in (`client.options`); see `LockClientOptions`. */
export interface ResolvedClientOptions {
  /** See `LockClientOptions.prefix`. */
  readonly prefix: string;
  /** See `LockClientOptions.leaseMs`. */
  readonly leaseMs: number;
  /** See `LockClientOptions.commandTimeoutMs`. */
  readonly commandTimeoutMs: number;
  /** See `LockClientOptions.retries`. */
  readonly retries: number;
  /** See `LockClientOptions.handoffTimeoutMs`. */
  readonly handoffTimeoutMs: number;
  /** See `LockClientOptions.driftFactor`. */
  readonly driftFactor: number;
  /** See `LockClientOptions.subscriptionLingerMs`. */
  readonly subscriptionLingerMs: number;
  /** See `LockClientOptions.minReplicas`. */
  readonly minReplicas: number;
  /** See `LockClientOptions.replicaTimeoutMs`. */
  readonly replicaTimeoutMs: number;
  /** See `LockClientOptions.evictionCheck`. */
  readonly evictionCheck: EvictionCheck;
  /** See `LockClientOptions.name`. */
  readonly name: string | undefined;
  /** See `LockClientOptions.wait`. */
  readonly wait: WaitMode;
  /** See `LockClientOptions.spinMinMs`. */
  readonly spinMinMs: number;
  /** See `LockClientOptions.spinMaxMs`. */
  readonly spinMaxMs: number;
}

export function resolveClientOptions(options: unknown): ResolvedClientOptions {
  const o = v.optionsObject('options', options) as LockClientOptions;
  const handoffTimeoutMs = v.positiveInteger('handoffTimeoutMs', o.handoffTimeoutMs ?? 2_000);
  const spin = resolveSpin(o, handoffTimeoutMs);
  return {
    prefix: v.prefix(o.prefix ?? 'holdfast'),
    leaseMs: v.positiveInteger('leaseMs', o.leaseMs ?? 30_000),
    commandTimeoutMs: v.positiveInteger('commandTimeoutMs', o.commandTimeoutMs ?? 5_000),
    retries: v.nonNegativeInteger('retries', o.retries ?? 3, 100),
    handoffTimeoutMs,
    driftFactor: v.numberInRange('driftFactor', o.driftFactor ?? 0.01, 0, 0.5),
    subscriptionLingerMs: v.nonNegativeInteger('subscriptionLingerMs', o.subscriptionLingerMs ?? 10_000),
    minReplicas: v.nonNegativeInteger('minReplicas', o.minReplicas ?? 0, 1_000),
    replicaTimeoutMs: v.positiveInteger('replicaTimeoutMs', o.replicaTimeoutMs ?? 1_000),
    evictionCheck: v.oneOf('evictionCheck', o.evictionCheck ?? 'refuse', ['refuse', 'warn', 'off'] as const),
    name: v.isDefault(o.name) ? undefined : v.string('name', o.name),
    wait: v.oneOf('wait', o.wait ?? 'auto', ['pubsub', 'spin', 'auto'] as const),
    ...spin,
  };
}

/**
 * `spinMinMs` and `spinMaxMs`: the longest sleep is at most half the hand-off
 * timeout (a waiter handed the lock looks again, and confirms, within its
 * claim), the shortest at most the longest. A default gives way to the other
 * bound; a value given outside them is refused.
 */
function resolveSpin(o: LockClientOptions, handoffTimeoutMs: number): { spinMinMs: number; spinMaxMs: number } {
  const maxAllowed = Math.max(1, Math.floor(handoffTimeoutMs / 2));
  const spinMaxMs = v.isDefault(o.spinMaxMs) ? Math.min(100, maxAllowed) : v.positiveInteger('spinMaxMs', o.spinMaxMs, maxAllowed);
  const spinMinMs = v.isDefault(o.spinMinMs) ? Math.min(10, spinMaxMs) : v.positiveInteger('spinMinMs', o.spinMinMs, spinMaxMs);
  return { spinMinMs, spinMaxMs };
}

export interface ResolvedAcquireOptions {
  readonly leaseMs: number | undefined;
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** `acquire()` without options, the common call: nothing to read or check. */
const NO_ACQUIRE_OPTIONS: ResolvedAcquireOptions = Object.freeze({ leaseMs: undefined, waitMs: undefined, signal: undefined });

export function resolveAcquireOptions(options: unknown): ResolvedAcquireOptions {
  if (options === undefined) return NO_ACQUIRE_OPTIONS;
  const o = v.optionsObject('options', options) as AcquireOptions;
  return {
    leaseMs: v.isDefault(o.leaseMs) ? undefined : v.positiveInteger('leaseMs', o.leaseMs),
    waitMs: v.isDefault(o.waitMs) ? undefined : v.positiveInteger('waitMs', o.waitMs),
    signal: v.signal(o.signal),
  };
}

/** The time kept back from a lease for clock drift (see `driftFactor`). */
export function driftMarginMs(leaseMs: number, driftFactor: number): number {
  return Math.floor(leaseMs * driftFactor) + 2;
}

/** `close()` options: `release` must be a boolean (a string such as `'no'` is not "truthy enough"). */
export function resolveCloseOptions(options: unknown): { release: boolean } {
  const o = v.optionsObject('options', options) as CloseOptions;
  return { release: v.isDefault(o.release) ? false : v.boolean('release', o.release) };
}
