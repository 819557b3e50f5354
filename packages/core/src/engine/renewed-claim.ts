import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockLostError, type LostReason } from '../errors/errors.js';
import type { CallLimits } from '../port/redis-call.js';
import { noteGrant, publishLost, traceRelease, type TracedHold } from '../telemetry/telemetry.js';
import type { LeaseEvents } from '../telemetry/events.js';

/** The kinds whose work runs under a renewed claim (telemetry's and the events' `kind`). */
export type ClaimKind = 'run-once' | 'idempotency' | 'single-flight' | 'inbox';

/** What a renewal found: `ok`, the claim `gone` (expired or removed), or `taken` by another owner (or foreign data). */
export type RenewOutcome = 'ok' | 'gone' | 'taken';

/** What a renewed claim needs of its client's engine, named as the engine names it. */
export interface ClaimEngine {
  /** The client's id. */
  readonly clientId: string;
  /** Time kept back from a claim of `ms` for clock drift. */
  marginMs(ms: number): number;
  /** Emits an event to the client's listeners, never throwing. */
  emit<K extends keyof LeaseEvents>(event: K, ...args: LeaseEvents[K]): void;
  /** Emits `event` with the payload `build` returns, built only when someone listens. */
  emitLazily<K extends 'acquired' | 'lost'>(event: K, build: () => LeaseEvents[K][0]): void;
  /** Calls `listener` at the start of the client's `close()`; returns the function that unregisters it. */
  onClose(listener: () => void): () => void;
}

/** What the work under a claim is given: its key, its fencing token and its signal, nothing to stop it with. */
export interface ClaimView {
  /** The claimed key, as given. */
  readonly key: string;
  /** The claim's fencing token (the slot's counter: greater than every earlier claim's or lock's there). */
  readonly token: number;
  /** Aborts when the claim ends before the work does (`LockLostError`, or `ClientClosedError` at `close()`). */
  readonly signal: AbortSignal;
}

/** How a claim of one kind is kept in Redis: its renewal call (to `ttlMs` from now, never shorter). */
export type RenewClaim = (ttlMs: number, limits: CallLimits) => Promise<RenewOutcome>;

/**
 * A claim this process won (a run-once key, an idempotency key, a flight),
 * renewed while its work runs: every third of `ttlMs`, to `ttlMs` from the
 * renewal, one renewal at a time. It is reported lost (signal, `lost` event)
 * as soon as the server could have expired it without a renewal confirmed
 * (the drift margin kept back, as for a lock's lease), or when a renewal
 * finds it gone or someone else's. `stop()` ends the renewal and leaves the
 * claim to its ttl; `close()` of the client stops it too, so nothing of it
 * outlives the client.
 */
export class RenewedClaim {
  /** The claimed key (telemetry's `name`). */
  readonly name: string;
  readonly token: number;
  /** Telemetry's view of a hold: one hold, with the claim's ttl as its lease. */
  readonly count = 1;
  readonly leaseMs: number;
  /** What the work is given. */
  readonly view: ClaimView;
  readonly #engine: ClaimEngine;
  readonly #kind: ClaimKind;
  readonly #renewCall: RenewClaim;
  readonly #ttlMs: number;
  readonly #controller = new AbortController();
  readonly #unregister: () => void;
  /** Monotonic time after which the server may have expired the claim. */
  #deadline: number;
  #renewTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(engine: ClaimEngine, init: { kind: ClaimKind; key: string; token: number; ttlMs: number; deadline: number; renew: RenewClaim }) {
    this.#engine = engine;
    this.#kind = init.kind;
    this.name = init.key;
    this.token = init.token;
    this.#ttlMs = init.ttlMs;
    this.leaseMs = init.ttlMs;
    this.#deadline = init.deadline;
    this.#renewCall = init.renew;
    this.view = Object.freeze({ key: init.key, token: init.token, signal: this.#controller.signal });
    noteGrant(this);
    this.#unregister = engine.onClose(() => this.#closed());
    this.#armDeadline();
    this.#scheduleRenewal();
  }

  /**
   * Why the claim can no longer be trusted (a `LockLostError`, or a
   * `ClientClosedError`), or undefined while it is: read just before a write
   * that only the claim's holder may make, so a process resumed after a pause
   * longer than the claim learns it before writing.
   */
  lostReason(): unknown {
    if (!this.#ended) this.#checkDeadline();
    return this.#controller.signal.aborted ? this.#controller.signal.reason : undefined;
  }

  /**
   * Stops renewing once the work ended: the claim stays in Redis until its
   * ttl runs out (or the kind's own script ends it). Reported as a release
   * (event and telemetry), so that what counts held claims counts this one out.
   */
  stop(): void {
    if (this.#ended) return;
    this.#end();
    const { name, token } = this;
    this.#engine.emit('released', { name, token, holdCount: 0, kind: this.#kind });
    // Nothing is sent: the release is the end of the renewal, traced for its timing.
    void traceRelease(this.#engine.clientId, this as unknown as TracedHold, token, () => Promise.resolve(), this.#kind);
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
    this.#renewCall(this.#ttlMs, { deadline: this.#deadline }).then(
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
    const kind = this.#kind;
    this.#engine.emitLazily('lost', () => ({ name, token, reason, error, kind }));
    // Given the kind, publishLost reads no hold kind: this claim is the rest of a TracedHold.
    publishLost(this.#engine.clientId, this as unknown as TracedHold, reason, error, kind);
  }
}
