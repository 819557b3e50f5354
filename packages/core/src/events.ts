import type { LockLostError, LostReason } from './errors.js';

/**
 * What an event is about: a mutex (`'lock'`) or a semaphore's permits (`'semaphore'`).
 * Events of a Redlock carry no `kind`.
 */
export type SynchronizerKind = 'lock' | 'semaphore';

/** Payload of `acquired`: a new acquisition or a re-entry. */
export interface AcquiredEvent {
  /** What was acquired (absent from a Redlock's events). */
  readonly kind?: SynchronizerKind;
  readonly name: string;
  readonly token: number;
  /** Holds of this owner after the acquisition (1 for a new one). */
  readonly holdCount: number;
  /** Time spent waiting and calling Redis, in ms. */
  readonly waitedMs: number;
  readonly reentrant: boolean;
  /** Redlock only: validity left at acquisition, in ms. */
  readonly validityMs?: number;
  /** Semaphore only: the permits this lease holds. */
  readonly permits?: number;
}

/** Payload of `released`, emitted on every release, partial or full. */
export interface ReleasedEvent {
  /** What was released (absent from a Redlock's events). */
  readonly kind?: SynchronizerKind;
  readonly name: string;
  readonly token: number;
  /** Holds this owner still has (0: the lock left it). */
  readonly holdCount: number;
}

/** Payload of `extended`. */
export interface ExtendedEvent {
  /** What was extended (absent from a Redlock's events). */
  readonly kind?: SynchronizerKind;
  readonly name: string;
  readonly token: number;
  /** The lease the lock now has left, in ms. */
  readonly leaseMs: number;
}

/** Payload of `lost`: a lease ended without being released. */
export interface LostEvent {
  /** What was lost (absent from a Redlock's events). */
  readonly kind?: SynchronizerKind;
  readonly name: string;
  readonly token: number;
  readonly reason: LostReason;
  readonly error: LockLostError;
}

/** Events of a `LockClient` (and of a `Redlock`), event → listener arguments. */
export interface LockClientEvents {
  acquired: [event: AcquiredEvent];
  released: [event: ReleasedEvent];
  extended: [event: ExtendedEvent];
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
