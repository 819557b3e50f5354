import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockLostError, type LostReason } from '../errors/errors.js';
import { noteGrant, publishLost, traceRelease, type TracedHold } from '../telemetry/telemetry.js';
import { renew } from './run-once-calls.js';
import type { RunOnceEngine } from './run-once-engine.js';
import type { RunOnceKeys } from './run-once-keys.js';
import type { RunOnceClaim } from './run-once-options.js';

/**
 * A claim this process won, renewed while its work runs: every third of
 * `ttlMs`, to `ttlMs` from the renewal, one renewal at a time. It is
 * reported lost (signal, `lost` event) as soon as the server could have
 * expired it without a renewal confirmed (the drift margin kept back, as for
 * a lock's lease), or when a renewal finds it gone or someone else's. `stop()`
 * ends the renewal and leaves the claim to its ttl; `close()` of the client
 * stops it too, so nothing of it outlives the client.
 */
export class ActiveClaim {
  /** The run-once key (telemetry's `name`). */
  readonly name: string;
  readonly token: number;
  /** Telemetry's view of a hold: one hold, with the claim's ttl as its lease. */
  readonly count = 1;
  readonly leaseMs: number;
  /** What the work is given: the key, the token and the signal, nothing to stop the claim with. */
  readonly view: RunOnceClaim;
  readonly #engine: RunOnceEngine;
  readonly #keys: RunOnceKeys;
  readonly #owner: string;
  readonly #ttlMs: number;
  readonly #controller = new AbortController();
  readonly #unregister: () => void;
  /** Monotonic time after which the server may have expired the claim. */
  #deadline: number;
  #renewTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(engine: RunOnceEngine, init: { key: string; keys: RunOnceKeys; owner: string; token: number; ttlMs: number; deadline: number }) {
    this.#engine = engine;
    this.name = init.key;
    this.#keys = init.keys;
    this.#owner = init.owner;
    this.token = init.token;
    this.#ttlMs = init.ttlMs;
    this.leaseMs = init.ttlMs;
    this.#deadline = init.deadline;
    this.view = Object.freeze({ key: init.key, token: init.token, signal: this.#controller.signal });
    noteGrant(this);
    this.#unregister = engine.onClose(() => this.#closed());
    this.#armDeadline();
    this.#scheduleRenewal();
  }

  /**
   * Stops renewing once the work ended: the claim stays in Redis until its
   * ttl runs out. Reported as a release (event and telemetry), so that what
   * counts held claims counts this one out.
   */
  stop(): void {
    if (this.#ended) return;
    this.#end();
    const { name, token } = this;
    this.#engine.emit('released', { name, token, holdCount: 0, kind: 'run-once' });
    // Nothing is sent: the release is the end of the renewal, traced for its timing.
    void traceRelease(this.#engine.clientId, this as unknown as TracedHold, token, () => Promise.resolve(), 'run-once');
  }

  #end(): void {
    this.#ended = true;
    clearTimeout(this.#renewTimer);
    clearTimeout(this.#deadlineTimer);
    this.#renewTimer = undefined;
    this.#deadlineTimer = undefined;
    this.#unregister();
  }

  #scheduleRenewal(): void {
    this.#renewTimer = setTimeout(() => this.#renew(), Math.max(1, Math.floor(this.#ttlMs / 3)));
    // The work it guards keeps the process alive, not its renewal.
    this.#renewTimer.unref();
  }

  #armDeadline(): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = setTimeout(() => this.#checkDeadline(), Math.max(0, this.#deadline - performance.now()));
    this.#deadlineTimer.unref();
  }

  #checkDeadline(): boolean {
    if (this.#ended) return true;
    if (performance.now() < this.#deadline) {
      this.#armDeadline();
      return false;
    }
    // No renewal was confirmed in time (Redis slow or unreachable, or this process paused), as a
    // watchdog-renewed lease reports it.
    this.#lose('unreachable');
    return true;
  }

  #renew(): void {
    this.#renewTimer = undefined;
    // A process resumed after a pause learns that its claim may be gone before renewing it.
    if (this.#checkDeadline()) return;
    const sentAt = performance.now();
    renew(this.#engine, this.name, this.#keys, this.#owner, this.#ttlMs, { deadline: this.#deadline }).then(
      (outcome) => {
        if (this.#ended) return;
        if (outcome !== 'ok') {
          this.#lose(outcome === 'gone' ? 'expired' : 'taken');
          return;
        }
        this.#deadline = Math.max(this.#deadline, sentAt + this.#ttlMs - this.#engine.marginMs(this.#ttlMs));
        this.#armDeadline();
        this.#scheduleRenewal();
      },
      () => {
        // Tried again at the next tick; the deadline reports the claim lost if none gets through.
        if (this.#ended) return;
        this.#scheduleRenewal();
      },
    );
  }

  #lose(reason: LostReason): void {
    this.#end();
    const error = new LockLostError(this.name, this.token, reason);
    this.#controller.abort(error);
    this.#report(reason, error);
  }

  #closed(): void {
    if (this.#ended) return;
    this.#end();
    const closed = new ClientClosedError();
    this.#controller.abort(closed);
    this.#report('closed', new LockLostError(this.name, this.token, 'closed', { cause: closed }));
  }

  #report(reason: LostReason, error: LockLostError): void {
    const { name, token } = this;
    this.#engine.emitLazily('lost', () => ({ name, token, reason, error, kind: 'run-once' }));
    // Given the kind, publishLost reads no hold kind: this claim is the rest of a TracedHold.
    publishLost(this.#engine.clientId, this as unknown as TracedHold, reason, error, 'run-once');
  }
}
