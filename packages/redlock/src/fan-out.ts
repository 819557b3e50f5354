import { performance } from 'node:perf_hooks';
import { RedisTimeoutError } from '@holdfast/core';
import { errorOutcome, type InstanceOutcome } from './errors.js';
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
  /** True once the outcomes so far settle the question; checked after every answer. */
  readonly decided: (outcomes: readonly InstanceOutcome[]) => boolean;
  /** An answer that came after the decision or the timeout. Must not throw. */
  readonly onLate?: (instance: number, answer: Answer<R>) => void;
}

export interface FanOutResult<R> {
  readonly answers: readonly Answer<R>[];
  readonly outcomes: readonly InstanceOutcome[];
}

const PENDING = { state: 'pending' } as const;

/**
 * Sends one call to every instance at once and resolves as soon as the
 * answers decide the question, every instance answered, or `timeoutMs`
 * passed (instances still silent then become timeout errors). The calls are
 * never cancelled: whatever they do later goes to `onLate`, so a grant that
 * arrives after the decision can still be undone.
 */
export function fanOut<R>(
  count: number,
  send: (instance: number) => Promise<R>,
  options: FanOutOptions<R>,
): Promise<FanOutResult<R>> {
  // Plain loops and one counter: this runs twice per Redlock cycle, so no
  // per-answer scans or copies (the arrays are never written once resolved).
  const answers: Answer<R>[] = new Array<Answer<R>>(count);
  const outcomes: InstanceOutcome[] = new Array<InstanceOutcome>(count);
  for (let i = 0; i < count; i++) {
    answers[i] = PENDING;
    outcomes[i] = { instance: i, status: 'pending' };
  }
  let pending = count;
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
    const expire = () => {
      if (done) return;
      const error = new RedisTimeoutError(options.timeoutMs);
      for (let i = 0; i < count; i++) {
        if (outcomes[i]!.status === 'pending') {
          answers[i] = { state: 'error', error };
          outcomes[i] = errorOutcome(i, error);
        }
      }
      finish();
    };
    const settle = (instance: number, answer: Exclude<Answer<R>, { state: 'pending' }>) => {
      if (options.strict && !done && performance.now() - startedAt > options.timeoutMs) expire();
      if (done) {
        options.onLate?.(instance, answer);
        return;
      }
      answers[instance] = answer;
      try {
        outcomes[instance] =
          answer.state === 'ok' ? options.classify(instance, answer.value) : errorOutcome(instance, answer.error);
      } catch (error) {
        answers[instance] = { state: 'error', error };
        outcomes[instance] = errorOutcome(instance, error);
      }
      if (--pending === 0 || options.decided(outcomes)) finish();
    };
    for (let i = 0; i < count; i++) {
      let call: Promise<R>;
      try {
        call = send(i);
      } catch (error) {
        call = Promise.reject(error);
      }
      call.then(
        (value) => settle(i, { state: 'ok', value }),
        (error: unknown) => settle(i, { state: 'error', error }),
      );
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
