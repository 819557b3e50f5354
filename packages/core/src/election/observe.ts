import { ClientClosedError, isHoldfastError } from '../errors/errors.js';
import { randomId } from '../engine/owner.js';
import { inspectElection, type Leader } from './election-calls.js';
import type { ElectionEngine } from './election-engine.js';
import type { ElectionKeys } from './election-keys.js';

/** A sleep with nothing to wait for but announcements (a timer cannot be longer). */
const LONGEST_SLEEP_MS = 2_000_000_000;

/** True when both name the same leader (or both nobody). */
function sameLeader(a: Leader | null, b: Leader | null): boolean {
  return a === b || (a !== null && b !== null && a.epoch === b.epoch && a.value === b.value);
}

/**
 * The leader now, then every change. Woken by the scripts' announcements on
 * the election's observers' channel (elected, proclaimed, resigned, a grant
 * undone); a leader that vanished without a word (crash, expiry) is noticed
 * by one timer per observed term, set for the end of the term as last read
 * plus the drift margin: the state is read again then, and the timer set
 * again for a term that was renewed meanwhile. No polling while subscribed;
 * without a subscription (a failed subscribe) it looks again every
 * `handoffTimeoutMs`.
 */
export async function* observeLeader(
  engine: ElectionEngine,
  name: string,
  keys: ElectionKeys,
  signal: AbortSignal | undefined,
): AsyncGenerator<Leader | null, void, undefined> {
  engine.assertOpen();
  if (signal?.aborted) return;
  const waiter = await engine.waiters.join(keys.news, randomId(), Infinity);
  const unregister = engine.onClose(() => waiter.fail(new ClientClosedError()));
  let last: Leader | null | undefined;
  try {
    for (;;) {
      if (engine.isClosed()) throw new ClientClosedError();
      if (signal?.aborted) return;
      // Announcements from here on are news: the read below may predate them.
      waiter.drain();
      let wakeInMs: number;
      try {
        const state = await inspectElection(engine, name, keys);
        // A term (or a hand-off's claim) in progress: look again once it could have ended.
        wakeInMs = state.remainingMs > 0 ? state.remainingMs + engine.marginMs(state.remainingMs) + 1 : LONGEST_SLEEP_MS;
        if (last === undefined || !sameLeader(last, state.leader)) {
          last = state.leader;
          const readAt = performance.now();
          yield state.leader;
          // The consumer's time counts against the timer.
          wakeInMs -= performance.now() - readAt;
        }
      } catch (error) {
        // Redis unreachable or slow: reported, and tried again shortly; any other error ends the iteration.
        if (engine.isClosed()) throw new ClientClosedError();
        if (!isHoldfastError(error) || !error.code.startsWith('ERR_REDIS')) throw error;
        engine.onError(error);
        wakeInMs = engine.handoffTimeoutMs;
      }
      if (!engine.waiters.isListening(keys.news)) wakeInMs = Math.min(wakeInMs, engine.handoffTimeoutMs);
      try {
        await waiter.sleep(performance.now() + wakeInMs, signal);
      } catch (error) {
        if (signal?.aborted && error === signal.reason) return;
        throw error;
      }
    }
  } finally {
    unregister();
    waiter.dispose();
  }
}
