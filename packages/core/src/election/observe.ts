import { performance } from 'node:perf_hooks';
import { ClientClosedError, isHoldfastError } from '../errors/errors.js';
import { randomId } from '../engine/owner.js';
import type { Waiter } from '../engine/waiter.js';
import { inspectElection, type ElectionEngine, type ElectionState, type Leader } from './election-calls.js';
import type { ElectionKeys } from './election-keys.js';

/** A sleep with nothing to wait for but announcements (a timer cannot be longer). */
const LONGEST_SLEEP_MS = 2_000_000_000;

/** `[epoch, revision]`: where a change stands among an election's changes (see _election.lua). */
type Position = readonly [number, number];

/** One announcement on the observers' channel, as _election.lua publishes it. */
interface Change {
  readonly position: Position;
  /** The leader from this change on: null when the term ended. */
  readonly leader: Leader | null;
  /** The leader's term's remaining ms when the change was made (0 when it ended). */
  readonly remainingMs: number;
}

function after(a: Position, b: Position): boolean {
  return a[0] > b[0] || (a[0] === b[0] && a[1] > b[1]);
}

/** True when both name the same leader (or both nobody). */
function sameLeader(a: Leader | null, b: Leader | null): boolean {
  return a === b || (a !== null && b !== null && a.epoch === b.epoch && a.value === b.value);
}

/** 'l|<epoch>|<revision>|<ms>|<value>' or 'x|<epoch>|<revision>'; undefined for anything else. */
export function parseChange(message: string): Change | undefined {
  const ended = /^x\|(\d+)\|(\d+)$/.exec(message);
  const leads = ended ? undefined : /^l\|(\d+)\|(\d+)\|(-?\d+)\|([\s\S]*)$/.exec(message);
  const match = ended ?? leads;
  if (!match) return undefined;
  const epoch = Number(match[1]);
  const revision = Number(match[2]);
  if (!Number.isSafeInteger(epoch) || !Number.isSafeInteger(revision) || epoch < 1) return undefined;
  if (!leads) return { position: [epoch, revision], leader: null, remainingMs: 0 };
  return { position: [epoch, revision], leader: { value: leads[4]!, epoch }, remainingMs: Math.max(0, Number(leads[3])) };
}

/**
 * What observers are told between `last` and `next`: nothing when they name
 * the same leader, and a term's end (null) before another term's leader, so
 * that every term shows as begun and ended whichever way it ended.
 */
function steps(last: Leader | null | undefined, next: Leader | null): (Leader | null)[] {
  if (last !== undefined && sameLeader(last, next)) return [];
  if (last && next && last.epoch !== next.epoch) return [null, next];
  return [next];
}

/**
 * The leader now, then every change, in order. Every script that changes
 * the leader announces the change itself on the election's observers'
 * channel, with its position (epoch, revision); messages on one
 * subscription arrive in the order they were published, so each one is
 * yielded as it comes. A read of the state (at the start, and after a gap)
 * has a position too: messages it already covers are dropped, those after
 * it are yielded, so nothing is yielded twice or skipped.
 *
 * A leader that vanished without a word (crash, expiry) is noticed by one
 * timer per observed term, set for the end of the term as last known plus
 * the drift margin: the state is read then, and if the term is gone its end
 * is yielded (what came after arrives as messages); a renewed term sets the
 * timer again. No polling while subscribed.
 *
 * Positions only grow while Redis keeps its data: a read is never before
 * a position seen earlier, nor a message before the last one. When Redis
 * loses its data (a restart without persistence, FLUSHALL, a failover to a
 * replica that lagged), the fencing counter and the epochs start again lower,
 * and every new change would be dropped as already seen. So a read that
 * places the election before the observer's position is taken as the start
 * of a new history: its state is yielded and its position taken as it is.
 * A message dropped as already seen (which happens only when a read covered
 * it, or in a new history) is checked by one read, yielding nothing unless
 * the history went backwards.
 *
 * What cannot be exact: while there is no subscription (spinning, a
 * reconnection, a failed subscribe) the state is read after each backoff step
 * (see `Waiter.lookAgainIn`), and after it is back, once; changes in that gap are reported as the state read.
 * The same holds for a consumer that leaves more than `KEPT_MESSAGES_MAX`
 * changes unread, and for the changes of a history Redis lost.
 */
export async function* observeLeader(
  engine: ElectionEngine,
  name: string,
  keys: ElectionKeys,
  signal: AbortSignal | undefined,
): AsyncGenerator<Leader | null, void, undefined> {
  engine.assertOpen();
  if (signal?.aborted) return;
  const waiter = await engine.waiters.join(keys.news, randomId(), Infinity, true);
  const unregister = engine.onClose(() => waiter.fail(new ClientClosedError()));
  let last: Leader | null | undefined;
  let position: Position = [0, -1];
  // A read whose state is yielded as it is: at the start, and after messages may have been missed.
  let resync = true;
  // When the last yielded leader's term could have ended (monotonic ms), if it had not been renewed.
  let termEndsAt = Infinity;
  // A message was dropped as already seen: a read checks that the history did not go backwards.
  let check = false;
  try {
    for (;;) {
      if (engine.isClosed()) throw new ClientClosedError();
      if (signal?.aborted) return;
      const listening = engine.waiters.isListening(keys.news);
      if (waiter.takeGap() || !listening) resync = true;
      const termOver = last != null && performance.now() >= termEndsAt;
      if (resync || termOver || check) {
        let state: ElectionState;
        try {
          state = await inspectElection(engine, name, keys);
        } catch (error) {
          // Redis unreachable or slow: reported, and read again shortly; any other error ends the iteration.
          if (engine.isClosed()) throw new ClientClosedError();
          if (!isHoldfastError(error) || !error.code.startsWith('ERR_REDIS')) throw error;
          engine.onError(error);
          await sleep(waiter, engine.handoffTimeoutMs, signal);
          continue;
        }
        const readAt = performance.now();
        check = false;
        // Redis lost its data: the read starts a new history, reported as read.
        const restarted = after(position, state.position);
        let next: Leader | null;
        if (resync || restarted) {
          resync = false;
          next = state.leader;
          if (restarted || after(state.position, position)) position = state.position;
        } else if (last) {
          // The timer of the last leader's term (or a check), on an unbroken subscription and
          // history: the read says only whether that term is still on. Anything newer is still
          // to come as messages.
          const epoch = last.epoch;
          next = state.leader?.epoch === epoch ? last : null;
          if (next === null && after([epoch, Infinity], position)) position = [epoch, Infinity];
        } else {
          next = null;
        }
        termEndsAt = next && state.leader?.epoch === next.epoch ? readAt + state.remainingMs + engine.marginMs(state.remainingMs) + 1 : Infinity;
        for (const step of steps(last, next)) {
          last = step;
          yield step;
        }
      }
      for (const message of waiter.takeMessages()) {
        const change = parseChange(message);
        if (!change) {
          // Not a change this version can place (a script of another version): read the state.
          resync = true;
          continue;
        }
        if (!after(change.position, position)) {
          check = true;
          continue;
        }
        position = change.position;
        const next = change.leader;
        // The term's timer, from the remaining ms the change carries; a renewal since is found when it fires.
        termEndsAt = next ? performance.now() + change.remainingMs + engine.marginMs(change.remainingMs) + 1 : Infinity;
        for (const step of steps(last, next)) {
          last = step;
          yield step;
        }
      }
      // A read still to make goes first.
      if (check || resync) continue;
      // Without a subscription (spinning, a subscribe that failed): a backoff step, then a read.
      const wakeInMs = waiter.lookAgainIn(last ? termEndsAt - performance.now() : LONGEST_SLEEP_MS);
      await sleep(waiter, Math.min(wakeInMs, LONGEST_SLEEP_MS), signal);
      if (signal?.aborted) return;
    }
  } finally {
    unregister();
    waiter.dispose();
  }
}

/** Sleeps `ms` or until the waiter is woken; ends quietly on the signal. */
async function sleep(waiter: Waiter, ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await waiter.sleep(performance.now() + Math.max(0, ms), signal);
  } catch (error) {
    if (signal?.aborted && error === signal.reason) return;
    throw error;
  }
}
