import { performance } from 'node:perf_hooks';
import { RedisTimeoutError } from '@holdfast/core';
import { errorOutcome, type InstanceOutcome } from './errors.js';
import type { Tally } from './quorum.js';
import type { QueuedTimeout, TimeoutQueue } from '@holdfast/core/internal';

/** One instance's raw answer. */
export type Answer<R> =
  | { readonly state: 'ok'; readonly value: R }
  | { readonly state: 'error'; readonly error: unknown }
  | { readonly state: 'pending' };

export interface FanOutOptions<R> {
  /** Instances silent this long, in ms after the start, count as timed out. */
  readonly timeoutMs: number;
  /** A shared queue of timeouts of `timeoutMs` (the Redlock's): used instead of a timer per fan-out. */
  readonly timeouts?: TimeoutQueue | undefined;
  /**
   * Also refuse answers that were read after `timeoutMs`, even when they had
   * arrived earlier and only this process was slow to read them. Grants
   * need it: the fencing argument bounds how long an attempt collects them.
   */
  readonly strict?: boolean;
  /** How a value reads as an outcome. */
  readonly classify: (instance: number, value: R) => InstanceOutcome;
  /**
   * True once the outcomes so far settle the question; checked after every
   * answer, with the outcomes counted by status (kept up to date as they come,
   * not recounted).
   */
  readonly decided: (outcomes: readonly InstanceOutcome[], counts: Tally) => boolean;
  /** An answer that came after the decision or the timeout. Must not throw. */
  readonly onLate?: (instance: number, answer: Answer<R>) => void;
}

export interface FanOutResult<R> {
  readonly answers: readonly Answer<R>[];
  readonly outcomes: readonly InstanceOutcome[];
}

/**
 * Where a sender reports its instance's answer, once: from the handlers of
 * its own call, so an answer costs no promise of the fan-out's. Never throws.
 */
export interface AnswerSink<R> {
  ok(instance: number, value: R): void;
  fail(instance: number, error: unknown): void;
}

/**
 * Sends one call to an instance and reports its answer to `sink`; returns
 * the call (a caller may wait for it to be over, answered or failed).
 */
export type SendTo<R> = (instance: number, sink: AnswerSink<R>) => Promise<unknown>;

/** A call made for a sink, as a promise of its answer (off the lock cycle, where a promise more costs nothing). */
export function answerOf<R>(send: (sink: AnswerSink<R>) => unknown): Promise<R> {
  return new Promise((resolve, reject) => {
    send({ ok: (_, value) => resolve(value), fail: (_, error) => reject(error) });
  });
}

const PENDING = { state: 'pending' } as const;

/** Counts an outcome in its tally field (named fields: a computed key would be a megamorphic load and store). */
function countIn(counts: { yes: number; notHeld: number; busy: number; errors: number; pending: number }, status: InstanceOutcome['status']): void {
  switch (status) {
    case 'granted':
    case 'ok':
      counts.yes++;
      break;
    case 'not-held':
      counts.notHeld++;
      break;
    case 'busy':
      counts.busy++;
      break;
    case 'error':
      counts.errors++;
      break;
    default:
      counts.pending++;
  }
}

/**
 * fanOutTo, for calls that return their answer as a promise (off the lock
 * cycle: inspection, renewal, the raise round).
 */
export function fanOut<R>(
  count: number,
  send: (instance: number) => Promise<R>,
  options: FanOutOptions<R>,
): Promise<FanOutResult<R>> {
  return fanOutTo(
    count,
    (i, sink) => {
      let call: Promise<R>;
      try {
        call = send(i);
      } catch (error) {
        call = Promise.reject(error);
      }
      return call.then(
        (value) => sink.ok(i, value),
        (error: unknown) => sink.fail(i, error),
      );
    },
    options,
  );
}

/**
 * Sends one call to every instance at once and resolves as soon as the
 * answers decide the question, every instance answered, or `timeoutMs`
 * passed (instances still silent then become timeout errors). The calls are
 * never cancelled: whatever they do later goes to `onLate`, so a grant that
 * arrives after the decision can still be undone.
 */
export function fanOutTo<R>(count: number, sendTo: SendTo<R>, options: FanOutOptions<R>): Promise<FanOutResult<R>> {
  // Plain loops and running counts: this runs twice per Redlock cycle, so no
  // per-answer scans or copies (the arrays are never written once resolved).
  const answers: Answer<R>[] = [];
  const outcomes: InstanceOutcome[] = [];
  for (let i = 0; i < count; i++) {
    answers.push(PENDING);
    outcomes.push({ instance: i, status: 'pending' });
  }
  const counts = { yes: 0, notHeld: 0, busy: 0, errors: 0, pending: count };
  const startedAt = performance.now();
  return new Promise((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    let queued: QueuedTimeout | undefined;
    const finish = () => {
      done = true;
      if (timer !== undefined) clearTimeout(timer);
      if (queued !== undefined) options.timeouts!.cancel(queued);
      resolve({ answers, outcomes });
    };
    const record = (instance: number, answer: Answer<R>, outcome: InstanceOutcome) => {
      answers[instance] = answer;
      outcomes[instance] = outcome;
      counts.pending--;
      countIn(counts, outcome.status);
    };
    const expire = () => {
      if (done) return;
      const error = new RedisTimeoutError(options.timeoutMs);
      for (let i = 0; i < count; i++) {
        if (outcomes[i]!.status === 'pending') record(i, { state: 'error', error }, errorOutcome(i, error));
      }
      finish();
    };
    const settle = (instance: number, answer: Exclude<Answer<R>, { state: 'pending' }>) => {
      if (options.strict && !done && performance.now() - startedAt > options.timeoutMs) expire();
      if (done) {
        options.onLate?.(instance, answer);
        return;
      }
      let outcome: InstanceOutcome;
      try {
        outcome = answer.state === 'ok' ? options.classify(instance, answer.value) : errorOutcome(instance, answer.error);
      } catch (error) {
        answer = { state: 'error', error };
        outcome = errorOutcome(instance, error);
      }
      record(instance, answer, outcome);
      if (counts.pending === 0 || options.decided(outcomes, counts)) finish();
    };
    const sink: AnswerSink<R> = {
      ok: (instance, value) => settle(instance, { state: 'ok', value }),
      fail: (instance, error) => settle(instance, { state: 'error', error }),
    };
    for (let i = 0; i < count; i++) {
      try {
        sendTo(i, sink);
      } catch (error) {
        // A sender that throws instead of reporting: an error answer, as a rejection would be (after this turn, as any answer).
        void Promise.resolve().then(() => sink.fail(i, error));
      }
    }
    if (count === 0) {
      finish();
      return;
    }
    // Armed after the sends (a send that answers synchronously still settles
    // through a microtask). Through setImmediate: answers that arrived while
    // this process was busy are read (poll phase) before the timeout is
    // declared (check phase).
    const { timeouts } = options;
    if (timeouts !== undefined && timeouts.ms === options.timeoutMs) {
      queued = timeouts.add(() => setImmediate(expire));
      return;
    }
    timer = setTimeout(() => setImmediate(expire), options.timeoutMs);
    timer.unref();
  });
}
