import { EventEmitter } from 'eventemitter3';
import { emitSafely, InvalidArgumentError } from '@holdfast/core';
import type { LockLostError, RenewalHold, RenewalResult, RenewalTarget, Renewer } from '@holdfast/core';
import type { WatchdogEvents } from './events.js';
import { resolveWatchdogOptions, type WatchdogOptions } from './options.js';
import { TickScheduler, type TickOutcome } from './scheduler.js';

const TARGET_METHODS = [
  'attachRenewer',
  'detachRenewer',
  'renewHolds',
  'confirmRenewal',
  'markLost',
  'sweepExpired',
] as const;

function isRenewalTarget(value: unknown): value is RenewalTarget {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return TARGET_METHODS.every((method) => typeof record[method] === 'function');
}

/**
 * Keeps the leases of a lock client alive for as long as they are held
 * (Redisson's lock watchdog): acquisitions that name no `leaseMs` get
 * `timeoutMs` as their lease, and every lease still held is renewed by one
 * batched call each `renewIntervalMs`, on one timer for all of them. A lease
 * that cannot be renewed is reported `lost` (and its `signal` aborted) before
 * Redis can let anyone else take it.
 */
export class Watchdog extends EventEmitter<WatchdogEvents> implements Renewer, AsyncDisposable {
  /** The lease given to, and renewed for, acquisitions that name none, in ms. */
  readonly timeoutMs: number;
  /** Time between renewal ticks, in ms. */
  readonly renewIntervalMs: number;
  /** Time before the next tick after a failed one, in ms. */
  readonly retryDelayMs: number;
  readonly #target: RenewalTarget;
  readonly #watched = new Set<RenewalHold>();
  readonly #reported = new WeakSet<RenewalHold>();
  readonly #scheduler: TickScheduler;
  #consecutiveFailures = 0;
  #stopping: Promise<void> | undefined;

  /**
   * Attaches to `locks` at once: from now on its acquisitions without
   * `leaseMs` are renewed. One watchdog per client; throws
   * `InvalidArgumentError` if the client already has one.
   */
  constructor(locks: RenewalTarget, options?: WatchdogOptions) {
    super();
    if (!isRenewalTarget(locks)) {
      throw new InvalidArgumentError('Expected `locks` to be a LockClient, a Redlock or another RenewalTarget');
    }
    const resolved = resolveWatchdogOptions(options);
    this.timeoutMs = resolved.timeoutMs;
    this.renewIntervalMs = resolved.renewIntervalMs;
    this.retryDelayMs = resolved.retryDelayMs;
    this.#target = locks;
    this.#scheduler = new TickScheduler({
      intervalMs: this.renewIntervalMs,
      retryDelayMs: this.retryDelayMs,
      tick: () => this.#tick(),
      hasWork: () => this.#watched.size > 0,
      onError: (error) => this.#emit('error', error),
    });
    locks.attachRenewer(this);
  }

  /** Leases being renewed now (re-entries of one lease count once). */
  get watchedCount(): number {
    return this.#watched.size;
  }

  /** True once stopped, or once the client it watched was closed. */
  get stopped(): boolean {
    return this.#scheduler.stopped;
  }

  /**
   * Stops renewing and detaches from the client; waits for a tick already
   * sent to settle (at most `timeoutMs`). Leases held at that point are not
   * released: they run out by their TTL and the client reports them `expired`.
   * Acquisitions made afterwards get the client's own `leaseMs`. Idempotent.
   */
  stop(): Promise<void> {
    if (!this.#stopping) {
      this.#target.detachRenewer(this);
      this.#watched.clear();
      this.#stopping = this.#scheduler.stop(this.timeoutMs);
    }
    return this.#stopping;
  }

  /** `await using dog = new Watchdog(...)` stops it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop();
  }

  // ---- Renewer: called by the client, synchronously ----

  /** @internal A renewed lease began. */
  watch(hold: RenewalHold): void {
    if (this.stopped || !hold.active) return;
    this.#watched.add(hold);
    this.#scheduler.wake();
  }

  /** @internal A lease left renewal: release started, loss, or client closed. */
  unwatch(hold: RenewalHold): void {
    if (this.#watched.delete(hold) && this.#watched.size === 0) this.#scheduler.idle();
  }

  /** @internal A renewed lease was lost, whoever noticed it. */
  lost(hold: RenewalHold, error: LockLostError): void {
    this.unwatch(hold);
    if (this.stopped || this.#reported.has(hold)) return;
    this.#reported.add(hold);
    this.#emit('lost', { name: hold.name, token: hold.token, reason: error.reason, error, ...hold.eventFields });
  }

  /** @internal The client closed: stop now, without waiting for anything. */
  targetClosed(): void {
    this.#watched.clear();
    this.#scheduler.halt();
  }

  // ---- internals ----

  #emit<K extends keyof WatchdogEvents>(event: K, ...args: WatchdogEvents[K]): void {
    emitSafely(this, event, args);
  }

  async #tick(): Promise<TickOutcome> {
    const target = this.#target;
    // First, so that after an event-loop stall (GC pause, SIGSTOP) every lease
    // that ran out meanwhile is reported lost before anything is sent for it.
    target.sweepExpired();
    // One array per tick, no intermediate copies: a tick's garbage is what
    // keeps V8's young generation grown (and the process's RSS up) between ticks.
    const holds = new Array<RenewalHold>(this.#watched.size);
    let count = 0;
    for (const hold of this.#watched) if (hold.active) holds[count++] = hold;
    holds.length = count;
    if (holds.length === 0) return 'ok';

    const startedAt = performance.now();
    let results: readonly (RenewalResult | undefined)[];
    try {
      results = await target.renewHolds(holds);
      if (results.length !== holds.length) {
        throw new TypeError(`renewHolds() returned ${results.length} results for ${holds.length} leases`);
      }
    } catch (error) {
      // The contract says renewHolds never rejects; a target that does still
      // only costs this tick.
      results = holds.map(() => ({ status: 'failed', error }));
    }
    if (this.stopped) return 'ok';
    const durationMs = Math.round(performance.now() - startedAt);
    // Replies can land after a stall as well: a lease whose deadline passed is
    // lost, and a late confirmation must not revive it.
    target.sweepExpired();

    let renewed = 0;
    let lost = 0;
    let failed = 0;
    let firstError: unknown;
    for (let i = 0; i < holds.length; i++) {
      const hold = holds[i]!;
      // Released, lost or closed while the call was out: its reply is stale.
      if (!hold.active || !this.#watched.has(hold)) continue;
      const result = results[i];
      if (result?.status === 'renewed') {
        renewed++;
        target.confirmRenewal(hold, startedAt);
      } else if (result?.status === 'lost') {
        lost++;
        // The target reports the loss back through lost(), which emits it.
        target.markLost(hold, result.reason);
      } else {
        failed++;
        firstError ??= result?.error ?? new TypeError(`renewHolds() gave no result for lock \`${hold.name}\``);
      }
    }

    if (renewed > 0) this.#emit('renewed', { count: renewed, lost, failed, durationMs, startedAt });
    if (failed === 0) {
      this.#consecutiveFailures = 0;
      return 'ok';
    }
    this.#consecutiveFailures++;
    this.#emit('renewalFailed', {
      error: firstError,
      count: failed,
      consecutiveFailures: this.#consecutiveFailures,
      durationMs,
    });
    return 'retry';
  }
}
