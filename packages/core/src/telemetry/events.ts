import type { LockLostError, LostReason } from '../errors/errors.js';

/** Payload of `acquired`: a new acquisition or a re-entry. */
export interface AcquiredEvent {
  /** The lock name. */
  readonly name: string;
  /** The lease's fencing token (a re-entry shares its hold's). */
  readonly token: number;
  /** Holds of this owner after the acquisition (1 for a new one). */
  readonly holdCount: number;
  /** Time spent waiting and calling Redis, in ms. */
  readonly waitedMs: number;
  /** True for a re-entry (inside `withLock` of the same lock), false for a new acquisition. */
  readonly reentrant: boolean;
  /** Redlock only: validity left at acquisition, in ms. */
  readonly validityMs?: number;
  /** Every name of the multi-lock (`client.multiLock()`) this lock was taken as a part of; `name` is that part. */
  readonly multiLock?: readonly string[];
  /** What was acquired, when not a mutex (absent for the mutex): a side of a read-write lock, `semaphore`, `election` (a term), `run-once` (a `runOnce` claim: `name` is its key), `idempotency` (the running claim of an idempotency key: `name` is `<name>:<request key>`) or `single-flight` (a flight's runner: `name` is its key). */
  readonly kind?: 'read' | 'write' | 'semaphore' | 'election' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox';
  /** Semaphore only: the permits this lease holds. */
  readonly permits?: number;
}

/** Payload of `released`, emitted on every release, partial or full. */
export interface ReleasedEvent {
  /** The lock name. */
  readonly name: string;
  /** The released lease's fencing token. */
  readonly token: number;
  /** Holds this owner still has (0: the lock left it). */
  readonly holdCount: number;
  /** Every name of the multi-lock (`client.multiLock()`) this lock was taken as a part of; `name` is that part. */
  readonly multiLock?: readonly string[];
  /**
   * What was released, when not a mutex (absent for the mutex): a side of a read-write lock,
   * `semaphore`, `election` (a term), `run-once` (a `runOnce` claim whose work ended: it stays in Redis until its ttl),
   * `idempotency` or `single-flight` (a claim whose work ended: its result stored, or the claim given up).
   */
  readonly kind?: 'read' | 'write' | 'semaphore' | 'election' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox';
}

/** Payload of `extended`. */
export interface ExtendedEvent {
  /** The lock name. */
  readonly name: string;
  /** The extended lease's fencing token. */
  readonly token: number;
  /** The lease the lock now has left, in ms. */
  readonly leaseMs: number;
  /** Every name of the multi-lock (`client.multiLock()`) this lock was taken as a part of; `name` is that part. */
  readonly multiLock?: readonly string[];
  /** What was extended, when not a mutex (absent for the mutex): a side of a read-write lock, `semaphore`, or `election` (a term). */
  readonly kind?: 'read' | 'write' | 'semaphore' | 'election';
}

/** Payload of `lost`: a lease ended without being released. */
export interface LostEvent {
  /** The lock name. */
  readonly name: string;
  /** The lost lease's fencing token. */
  readonly token: number;
  /** How it was lost. */
  readonly reason: LostReason;
  /**
   * The loss as an error: also the lease's `signal.reason`, except for
   * `closed`, where the signal aborts with the `ClientClosedError` that is this error's `cause`.
   */
  readonly error: LockLostError;
  /** Every name of the multi-lock (`client.multiLock()`) this lock was taken as a part of; `name` is that part. */
  readonly multiLock?: readonly string[];
  /** What was lost, when not a mutex (absent for the mutex): a side of a read-write lock, `semaphore`, `election` (a term), `run-once` (a `runOnce` claim: `name` is its key), `idempotency` (the running claim of an idempotency key: `name` is `<name>:<request key>`) or `single-flight` (a flight's runner: `name` is its key). */
  readonly kind?: 'read' | 'write' | 'semaphore' | 'election' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox';
}

/**
 * The events every lease kind emits, and `error`, event → listener arguments: `LockClientEvents`
 * adds each kind's own (the latch's, the barrier's), declared in its folder.
 */
export interface LeaseEvents {
  /** A new acquisition or a re-entry. */
  acquired: [event: AcquiredEvent];
  /** Every release, partial (a re-entry's) or full. */
  released: [event: ReleasedEvent];
  /** `lease.extend()` succeeded. */
  extended: [event: ExtendedEvent];
  /** A lease ended without being released. */
  lost: [event: LostEvent];
  /** A background failure or a listener that threw; never thrown at the caller. */
  error: [error: unknown];
}

type AnyListener = (...args: unknown[]) => unknown;

/**
 * Anything with eventemitter3's `listeners()`.
 *
 * @inline
 */
export interface ListenerSource {
  listeners(event: never): unknown[];
  listenerCount?(event: never): number;
}

/**
 * Calls each listener on its own, so one that throws, or returns a promise
 * that rejects, neither breaks the lock nor keeps the others from running:
 * its error goes to `error` listeners. An `error` event that nobody listens
 * to is not silent (Node's convention), but it is not thrown either, which
 * would unwind the lock's own bookkeeping: it becomes a process warning
 * (`process.emitWarning`, type `HoldfastWarning`), as does an error thrown by
 * an `error` listener.
 *
 * Public so that an emitter beside the client (a `Renewer` such as
 * @holdfast/watchdog) delivers its events the same way.
 */
export function emitSafely(emitter: ListenerSource, event: string, args: readonly unknown[]): void {
  // Every acquire and release emits; listeners() copies the list even when it is empty.
  if (emitter.listenerCount?.(event as never) === 0) {
    if (event === 'error') warnUnhandled(args[0]);
    return;
  }
  const listeners = emitter.listeners(event as never) as AnyListener[];
  if (listeners.length === 0 && event === 'error') warnUnhandled(args[0]);
  for (const listener of listeners) {
    let result: unknown;
    try {
      result = listener(...args);
    } catch (error) {
      listenerFailed(emitter, event, error);
      continue;
    }
    if (isThenable(result)) {
      try {
        result.then(undefined, (error: unknown) => listenerFailed(emitter, event, error));
      } catch (error) {
        listenerFailed(emitter, event, error);
      }
    }
  }
}

/**
 * {@link emitSafely} with one payload, built only when someone listens:
 * every acquire and release emits, and most clients listen to neither.
 * Not for `error`, which must warn when nobody listens.
 */
export function emitLazily(emitter: ListenerSource, event: string, payload: () => unknown): void {
  if (emitter.listenerCount?.(event as never) === 0) return;
  emitSafely(emitter, event, [payload()]);
}

function listenerFailed(emitter: ListenerSource, event: string, error: unknown): void {
  if (event === 'error') warnUnhandled(error);
  else emitSafely(emitter, 'error', [error]);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Reports an error no `error` listener took, without throwing. */
function warnUnhandled(error: unknown): void {
  try {
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    process.emitWarning(`Unhandled holdfast 'error' event: ${message}`, {
      type: 'HoldfastWarning',
      code: 'HOLDFAST_UNHANDLED_ERROR',
      detail,
    });
  } catch {
    // Nowhere left to report to.
  }
}
