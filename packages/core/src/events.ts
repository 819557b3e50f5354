import type { LockLostError, LostReason } from './errors.js';

/** Payload of `acquired`: a new acquisition or a re-entry. */
export interface AcquiredEvent {
  readonly name: string;
  readonly token: number;
  /** Holds of this owner after the acquisition (1 for a new one). */
  readonly holdCount: number;
  /** Time spent waiting and calling Redis, in ms. */
  readonly waitedMs: number;
  readonly reentrant: boolean;
  /** Redlock only: validity left at acquisition, in ms. */
  readonly validityMs?: number;
}

/** Payload of `released`, emitted on every release, partial or full. */
export interface ReleasedEvent {
  readonly name: string;
  readonly token: number;
  /** Holds this owner still has (0: the lock left it). */
  readonly holdCount: number;
}

/** Payload of `extended`. */
export interface ExtendedEvent {
  readonly name: string;
  readonly token: number;
  /** The lease the lock now has left, in ms. */
  readonly leaseMs: number;
}

/** Payload of `lost`: a lease ended without being released. */
export interface LostEvent {
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

type AnyListener = (...args: unknown[]) => void;

/** Anything with eventemitter3's `listeners()`. */
export interface ListenerSource {
  listeners(event: never): unknown[];
  listenerCount?(event: never): number;
}

/**
 * Calls each listener on its own, so one that throws neither breaks the lock
 * nor keeps the others from running: its error goes to `error` listeners, and
 * an `error` listener that throws is ignored.
 */
export function emitSafely(emitter: ListenerSource, event: string, args: readonly unknown[]): void {
  // Every acquire and release emits; listeners() copies the list even when it is empty.
  if (emitter.listenerCount?.(event as never) === 0) return;
  const listeners = (name: string) => emitter.listeners(name as never) as AnyListener[];
  for (const listener of listeners(event)) {
    try {
      listener(...args);
    } catch (error) {
      if (event === 'error') continue;
      for (const onError of listeners('error')) {
        try {
          onError(error);
        } catch {
          // An error listener that throws has nowhere left to report to.
        }
      }
    }
  }
}
