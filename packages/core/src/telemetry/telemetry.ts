import { channel, tracingChannel, type TracingChannel } from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import type { LockLostError, LostReason } from '../errors/errors.js';
import type { RenewalResult } from '../options/renewal.js';

/**
 * holdfast's operations on `node:diagnostics_channel`, the convention undici
 * and the database drivers use: a `TracingChannel` per operation (its
 * `start`, `end`, `asyncStart`, `asyncEnd` and `error` channels, the context
 * object shared by all five), and a plain channel for lost leases. Nothing is
 * built while nobody subscribes: each publish point asks whether anyone
 * listens first, so an unobserved acquisition pays a few property reads per operation.
 */

/**
 * What a hold is, as telemetry names it (`election`: a term; `redlock`: a lock of @holdfast/redlock;
 * `run-once`: a `runOnce` claim; `idempotency`: an idempotency key's running claim; `single-flight`: a flight's runner).
 */
export type TelemetryKind = 'lock' | 'read' | 'write' | 'semaphore' | 'election' | 'redlock' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox';

/** Context of `holdfast:acquire` (every acquisition, re-entries included). */
export interface AcquireMessage {
  /** The lock, read-write lock or semaphore name. */
  readonly name: string;
  /** What is acquired. */
  readonly kind: TelemetryKind;
  /** `wait`: `acquire()` / `withLock()`; `try`: `tryAcquire()`. */
  readonly mode: 'wait' | 'try';
  /** The acquiring `LockClient`'s (or `Redlock`'s) id (the first characters of its owner ids). */
  readonly clientId: string;
  /**
   * The caller's `signal` option, when it gave one: an acquisition that rejects with
   * `signal.reason` after it aborted was ended by its caller, whatever the reason is.
   */
  readonly signal?: AbortSignal;
  /** Set on success: the lease (`token`, `holdCount`), or null when `tryAcquire()` found it busy. */
  result?: {
    /** The lease's fencing token. */
    readonly token: number;
    /** Holds of this owner after the acquisition (1 for a new one). */
    readonly holdCount?: number;
  } | null;
  /** Set on failure: what the acquisition rejected with. */
  error?: unknown;
}

/** The `signal` option of an acquisition's options as given (not validated yet), for `AcquireMessage.signal`. */
export function callerSignal(options: unknown): AbortSignal | undefined {
  const signal = typeof options === 'object' && options !== null ? (options as { signal?: unknown }).signal : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}

/** Context of `holdfast:release` (every release, partial or full). */
export interface ReleaseMessage {
  /** The lock name. */
  readonly name: string;
  /** What is released. */
  readonly kind: TelemetryKind;
  /** The lease's fencing token. */
  readonly token: number;
  /** The releasing client's id. */
  readonly clientId: string;
  /** True when this release ends the hold (its last lease). */
  readonly final: boolean;
  /**
   * Time since the hold was granted, in ms; undefined for a hold granted
   * while nobody subscribed (its grant time is recorded only for observers).
   */
  readonly heldMs: number | undefined;
  /**
   * The context of the traced acquisition that granted this hold (the object
   * `holdfast:acquire` subscribers saw), undefined when it was not traced. A
   * subscriber counting holds pairs releases and losses with the
   * acquisitions it counted through it, so a hold taken before it
   * subscribed is never counted out.
   */
  readonly acquire: AcquireMessage | undefined;
  /** Set on failure. */
  error?: unknown;
}

/** Context of `holdfast:extend` (`lease.extend()`). */
export interface ExtendMessage {
  /** The lock name. */
  readonly name: string;
  /** What is extended. */
  readonly kind: TelemetryKind;
  /** The lease's fencing token. */
  readonly token: number;
  /** The client's id. */
  readonly clientId: string;
  /** The lease asked for, in ms (the hold's own when the call names none). */
  readonly leaseMs: number;
  /** Set on failure (a `LockLostError` when the lease was gone). */
  error?: unknown;
}

/** Context of `holdfast:renewal`: one watchdog tick renewing a client's leases. */
export interface RenewalMessage {
  /** The client's id. */
  readonly clientId: string;
  /** Leases renewed in this tick. */
  readonly holds: number;
  /** Set on success: one result per lease, in order. */
  result?: readonly RenewalResult[];
  /** Set on failure (the tick's calls failed; the watchdog retries). */
  error?: unknown;
}

/** Message of `holdfast:lost`: a lease ended without being released (the `lost` event). */
export interface LostMessage {
  /** The lock name. */
  readonly name: string;
  /** What was lost. */
  readonly kind: TelemetryKind;
  /** The lost lease's fencing token. */
  readonly token: number;
  /** The client's id. */
  readonly clientId: string;
  /** How it was lost. */
  readonly reason: LostReason;
  /** Time since the hold was granted, in ms; undefined when it was granted while nobody subscribed. */
  readonly heldMs: number | undefined;
  /** The context of the traced acquisition that granted this hold, as in `ReleaseMessage.acquire`. */
  readonly acquire: AcquireMessage | undefined;
  /** The loss as an error. */
  readonly error: LockLostError;
}

/** The channel names, as `diagnostics_channel.tracingChannel()` / `channel()` take them. */
export const TELEMETRY_CHANNELS = {
  /** TracingChannel: every acquisition (`AcquireMessage`). */
  acquire: 'holdfast:acquire',
  /** TracingChannel: every release (`ReleaseMessage`). */
  release: 'holdfast:release',
  /** TracingChannel: `lease.extend()` (`ExtendMessage`). */
  extend: 'holdfast:extend',
  /** TracingChannel: one watchdog renewal tick (`RenewalMessage`). */
  renewal: 'holdfast:renewal',
  /** Channel: a lease lost (`LostMessage`). */
  lost: 'holdfast:lost',
  /** TracingChannel: an operation of a count-down latch or a barrier (`SyncMessage`). */
  sync: 'holdfast:sync',
  /** Channel: an inbox's outcome, handled, retried or dead (`InboxMessage`). */
  inbox: 'holdfast:inbox',
} as const;

const acquireChannel = tracingChannel<unknown, AcquireMessage>(TELEMETRY_CHANNELS.acquire);
const releaseChannel = tracingChannel<unknown, ReleaseMessage>(TELEMETRY_CHANNELS.release);
const extendChannel = tracingChannel<unknown, ExtendMessage>(TELEMETRY_CHANNELS.extend);
const renewalChannel = tracingChannel<unknown, RenewalMessage>(TELEMETRY_CHANNELS.renewal);
const lostChannel = channel(TELEMETRY_CHANNELS.lost);

/** True when any of the five channels of `ch` has a subscriber. */
function listened(ch: TracingChannel<unknown, object>): boolean {
  return (
    ch.start.hasSubscribers || ch.end.hasSubscribers || ch.asyncStart.hasSubscribers || ch.asyncEnd.hasSubscribers || ch.error.hasSubscribers
  );
}

/** Runs `run`, traced on `ch` with the context `message()` builds only when someone listens. */
export function traced<C extends object, T>(ch: TracingChannel<unknown, C>, message: () => C, run: () => Promise<T>): Promise<T> {
  if (!listened(ch)) return run();
  return ch.tracePromise(run, message());
}

/** What telemetry knows of a hold: core's `Hold` and @holdfast/redlock's. */
export interface TracedHold {
  readonly name: string;
  readonly token: number;
  readonly count: number;
  readonly leaseMs: number;
  readonly kind: KindOfHold;
}

/** The part of a hold's kind telemetry reads (its role). */
interface KindOfHold {
  readonly role: 'lock' | 'read' | 'write' | 'all' | 'semaphore' | 'election';
}

/** A hold's grant as telemetry recorded it: when, and the traced acquisition's context. */
interface Grant {
  readonly at: number;
  acquire: AcquireMessage | undefined;
}

/**
 * Grants of the holds made while someone listened, by hold. Kept here rather
 * than on the hold, so that an unobserved process keeps nothing per held
 * lock; the entry goes with its hold.
 */
const grants = new WeakMap<object, Grant>();

/**
 * Records when `hold` was granted, only while a subscriber could use it
 * (acquire, release or lost): called as a hold is made.
 */
export function noteGrant(hold: object): void {
  if (listened(acquireChannel) || listened(releaseChannel) || lostChannel.hasSubscribers) {
    grants.set(hold, { at: performance.now(), acquire: undefined });
  }
}

/** The kind telemetry reports for a hold. */
export function telemetryKind(hold: { readonly kind: KindOfHold }): TelemetryKind {
  const role = hold.kind.role;
  return role === 'all' ? 'lock' : role;
}

/**
 * Traces one acquisition. `holdOf` names the hold of what `run` resolved
 * with: a new hold's grant is tied to this context, which releases and
 * losses of that hold then carry (`acquire`), before the caller sees the lease.
 */
export function traceAcquire<T extends object>(
  message: () => AcquireMessage,
  run: () => Promise<T | null>,
  holdOf: (result: T) => object,
): Promise<T | null> {
  if (!listened(acquireChannel)) return run();
  const context = message();
  return acquireChannel.tracePromise(run, context).then((result) => {
    const hold = result === null ? undefined : holdOf(result);
    const grant = hold && grants.get(hold);
    // A re-entry's hold keeps the acquisition that granted it.
    if (grant && grant.acquire === undefined && (context.result?.holdCount ?? 1) === 1) grant.acquire = context;
    return result;
  });
}

/**
 * Traces several acquisitions granted together by one call (a multi-lock's
 * same-slot group): each part is its own acquisition, as if taken alone,
 * started before `run` and ended with its outcome (its lease, null when the
 * group was busy, or the group's error), so subscribers see every part of
 * a multi-lock the same way whichever path took it.
 */
export function traceAcquireAll<T extends object>(
  messages: readonly (() => AcquireMessage)[],
  run: () => Promise<readonly T[] | null>,
  holdOf: (result: T) => object,
): Promise<readonly T[] | null> {
  if (!listened(acquireChannel)) return run();
  let all: Promise<readonly T[] | null> | undefined;
  const parts = messages.map((message, i) => traceAcquire(message, () => (all ??= run()).then((results) => results?.[i] ?? null), holdOf));
  // Every part's grant is tied to its context before the caller sees the leases.
  return Promise.all(parts).then(() => all!);
}

export function traceRelease(
  clientId: string,
  hold: TracedHold,
  token: number,
  run: () => Promise<void>,
  kind: TelemetryKind = telemetryKind(hold),
): Promise<void> {
  return traced(
    releaseChannel,
    (): ReleaseMessage => {
      const grant = grants.get(hold);
      return {
        name: hold.name,
        kind,
        token,
        clientId,
        final: hold.count <= 1,
        heldMs: grant && performance.now() - grant.at,
        acquire: grant?.acquire,
      };
    },
    run,
  );
}

export function traceExtend(
  clientId: string,
  hold: TracedHold,
  leaseMs: number | undefined,
  run: () => Promise<void>,
  kind: TelemetryKind = telemetryKind(hold),
): Promise<void> {
  return traced(extendChannel, () => ({ name: hold.name, kind, token: hold.token, clientId, leaseMs: leaseMs ?? hold.leaseMs }), run);
}

export function traceRenewal<T>(clientId: string, holds: number, run: () => Promise<T>): Promise<T> {
  return traced(renewalChannel, () => ({ clientId, holds }), run);
}

export function publishLost(
  clientId: string,
  hold: TracedHold,
  reason: LostReason,
  error: LockLostError,
  kind: TelemetryKind = telemetryKind(hold),
): void {
  if (!lostChannel.hasSubscribers) return;
  const grant = grants.get(hold);
  const message: LostMessage = {
    name: hold.name,
    kind,
    token: hold.token,
    clientId,
    reason,
    heldMs: grant && performance.now() - grant.at,
    acquire: grant?.acquire,
    error,
  };
  lostChannel.publish(message);
}
