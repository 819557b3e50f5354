import { performance } from 'node:perf_hooks';
import { onAbort } from '../port/abort-listeners.js';

/**
 * One local waiter of one lock: sleeps until a wake-up message, a hand-off
 * naming it, its own timer, or its caller's signal (see Waiters).
 */

/**
 * A hand-off announced to this waiter: it holds the lock for at least `claimMs` from the hand-off.
 *
 * @inline
 */
export interface Handoff {
  readonly token: number;
  readonly claimMs: number;
  /** The server time of the hand-off, in ms (undefined from an older script). */
  readonly serverMs: number | undefined;
}

/**
 * How many messages a waiter that keeps them holds for its caller before it
 * drops them all and reports a gap instead: a caller that stopped reading
 * must not grow the process's memory without bound.
 */
export const KEPT_MESSAGES_MAX = 10_000;

/** How a waiter paces its looks (made by Waiters, per channel). */
export interface Pace {
  /** True while a wake-up on the waiter's channel would reach it. */
  listening(): boolean;
  /** The sleep before the `attempt`-th look (from 0) in a row without listening. */
  spinMs(attempt: number): number;
}

/** A waiter that never listens (no channel): it looks again as its kind plans. */
const UNPACED: Pace = { listening: () => true, spinMs: () => 0 };

export class Waiter {
  readonly id: string;
  #handoff: Handoff | undefined;
  /** The messages received and not taken yet; undefined for a waiter that does not keep them. */
  #messages: string[] | undefined;
  #gap = false;
  readonly #deadline: number;
  readonly #leave: () => void;
  #woken = false;
  #wakeAt = Infinity;
  #timer: NodeJS.Timeout | undefined;
  #settle: ((error?: unknown) => void) | undefined;
  readonly #pace: Pace;
  /** Looks in a row without listening: the backoff's exponent. */
  #spins = 0;

  constructor(id: string, deadline: number, leave: () => void, keepMessages = false, pace: Pace = UNPACED) {
    this.id = id;
    this.#deadline = deadline;
    this.#leave = leave;
    this.#pace = pace;
    if (keepMessages) this.#messages = [];
  }

  /**
   * How long to sleep before looking again, for a kind that would sleep
   * `naturalMs` while listening (the holder's remaining lease, a claim's time
   * to live): that while a message can wake it, else a backoff step (see
   * Waiters), never longer than `naturalMs`. The one rule every kind's wait
   * follows, spinning or not: a queued waiter, not listening, looks again
   * within half the hand-off timeout (spinMaxMs), so a turn handed to it is
   * found and confirmed before its claim runs out. `place`, when the kind's
   * reply tells it (a mutex's queued attempt): the backoff step is the
   * waiter's place in the queue rather than its count of looks, so the head
   * looks again after spinMinMs every time (the next hand-off is its own),
   * the next after up to twice that, and a waiter further back less often:
   * the queue moves one place per hand-off.
   */
  lookAgainIn(naturalMs: number, place?: number): number {
    if (this.#pace.listening()) {
      this.#spins = 0;
      return naturalMs;
    }
    return Math.min(naturalMs, this.#pace.spinMs(place ?? this.#spins++));
  }

  /** A message on the waiter's channel that is not a hand-off: kept (if this waiter keeps them), then a wake-up. */
  deliver(message: string): void {
    if (this.#messages) {
      if (this.#messages.length >= KEPT_MESSAGES_MAX) {
        this.#messages = [];
        this.#gap = true;
      } else {
        this.#messages.push(message);
      }
    }
    this.wake();
  }

  /**
   * Messages may have been missed (the subscription was re-established after
   * a reconnection, or too many were waiting to be taken): what the channel
   * said meanwhile is unknown.
   */
  markGap(): void {
    this.#gap = true;
    this.wake();
  }

  /** True once if messages may have been missed since the last call. */
  takeGap(): boolean {
    const gap = this.#gap;
    this.#gap = false;
    return gap;
  }

  /** The messages kept since the last call, oldest first. */
  takeMessages(): string[] {
    const messages = this.#messages ?? [];
    if (this.#messages) this.#messages = [];
    return messages;
  }

  /**
   * Sleeps until `untilMs` (monotonic), a wake-up message for this waiter, or
   * the signal. A wake-up that arrived while not sleeping ends the next sleep at once.
   */
  sleep(untilMs: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return Promise.resolve();
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      // Through onAbort: many waits may share the caller's signal, which keeps one listener.
      const stopListening = signal && onAbort(signal, () => this.#finish(signal.reason));
      this.#settle = (error?: unknown) => {
        this.#settle = undefined;
        stopListening?.();
        if (this.#timer) clearTimeout(this.#timer);
        this.#timer = undefined;
        this.#wakeAt = Infinity;
        if (error === undefined) resolve();
        else reject(error);
      };
      this.#schedule(untilMs);
    });
  }

  /** The lock was handed to this waiter (with `handoff`), or is free: retry now. */
  wake(handoff?: Handoff): void {
    if (handoff) this.#handoff = handoff;
    if (this.#settle) this.#finish();
    else this.#woken = true;
  }

  /** Forgets wake-ups and hand-offs received so far: only what arrives after this is news. */
  drain(): void {
    this.#woken = false;
    this.#handoff = undefined;
  }

  /** The hand-off announced since the last call, if any. */
  takeHandoff(): Handoff | undefined {
    const handoff = this.#handoff;
    this.#handoff = undefined;
    return handoff;
  }

  /**
   * Another waiter got the lock with a claim of `ms`: wake no later than when
   * that claim could run out. Never later than already planned, so a stream
   * of hand-offs to others cannot put off a waiter's own re-check (and the
   * refresh of its queue entry) for ever.
   */
  wakeBy(ms: number): void {
    if (this.#settle) {
      const at = performance.now() + ms + 1;
      if (at < this.#wakeAt) this.#schedule(at);
    }
  }

  /** @internal */
  fail(error: unknown): void {
    this.#finish(error);
  }

  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#settle = undefined;
    this.#leave();
  }

  #schedule(untilMs: number): void {
    const at = Math.min(untilMs, this.#deadline);
    if (this.#timer) clearTimeout(this.#timer);
    this.#wakeAt = at;
    this.#timer = setTimeout(() => this.#finish(), Math.max(0, Math.ceil(at - performance.now())));
  }

  #finish(error?: unknown): void {
    this.#settle?.(error);
  }
}
