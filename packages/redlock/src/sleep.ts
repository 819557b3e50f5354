import { performance } from 'node:perf_hooks';
import { onAbort, type Waiter } from '@holdfast/core/internal';

/**
 * Sleeps until `untilMs` (monotonic), a wake-up on any of the waiters (one
 * per instance), or an abort of any signal (rejects with its reason).
 * Resolves true when a wake-up ended the sleep early.
 */
export function sleepUntilWoken(
  waiters: readonly Waiter[],
  untilMs: number,
  signals: readonly (AbortSignal | undefined)[],
): Promise<boolean> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  const aborted = live.find((s) => s.aborted);
  if (aborted) return Promise.reject(aborted.reason);
  // Ends the other waiters' sleeps once one of them (or the timer) ended it.
  const stop = new AbortController();
  return new Promise<boolean>((resolve, reject) => {
    // Through onAbort: many waits may share the caller's signal, which keeps one listener.
    const listeners = live.map((signal) => onAbort(signal, () => finish(true, signal.reason)));
    const timer = setTimeout(() => finish(false), Math.max(0, Math.ceil(untilMs - performance.now())));
    let settled = false;
    function finish(failed: boolean, reason?: unknown): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const remove of listeners) remove();
      stop.abort();
      if (failed) reject(reason);
      else resolve(performance.now() < untilMs - 1);
    }
    for (const waiter of waiters) {
      // A waiter also ends at untilMs on its own timer; either way it is the
      // same outcome. Closing the client fails it, which the close signal
      // reports as well.
      waiter.sleep(untilMs, stop.signal).then(
        () => finish(false),
        (error: unknown) => {
          if (!stop.signal.aborted) finish(true, error);
        },
      );
    }
  });
}


/**
 * Forgets wake-ups received so far. One release is published on every
 * instance that had the lock, so after the first of those messages ends a
 * sleep, the others would each end a later sleep at once for nothing. Called
 * when a round starts: only a release after that point is news.
 */
export function dropPendingWakeUps(waiters: readonly Waiter[]): void {
  for (const waiter of waiters) waiter.drain();
}
