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
  /** The outcomes counted by status. */
  readonly counts: Tally;
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

/** Each index's pending outcome, shared by every fan-out (outcomes are never written, only replaced). */
const PENDING_OUTCOMES: InstanceOutcome[] = [];

function pendingOutcome(instance: number): InstanceOutcome {
  return (PENDING_OUTCOMES[instance] ??= { instance, status: 'pending' });
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
  const fanOut = new OptionsFanOut(count, sendTo, options);
  fanOut.start(count);
  return fanOut.result;
}

/**
 * One fan-out's answers so far, and the sink its senders report to. A kind
 * of fan-out is a subclass saying how a value reads, when the question is
 * settled and what happens then: the acquisition round is one (acquire-round.ts),
 * so its whole cycle, from sending to the decision, is this object's methods
 * and not closures made per round. One object with few methods, and an
 * answer's whole path in `ok`: it runs for every instance of every Redlock
 * cycle, and V8 compiles each function that runs that often on its own and
 * again inside every caller it is small enough to be copied into, so each
 * layer on this path is compiled several times over in a process's first
 * thousand cycles.
 */
export abstract class Collector<R, T> implements AnswerSink<R> {
  // Plain arrays and running counts: no per-answer scans or copies (the arrays are never written once decided).
  readonly answers: Answer<R>[] = [];
  readonly outcomes: InstanceOutcome[] = [];
  /** The outcomes so far counted by status. */
  readonly tally = { yes: 0, notHeld: 0, busy: 0, errors: 0, pending: 0 };
  /** Monotonic ms the first call was sent. */
  startedAt = 0;
  done = false;
  timer: NodeJS.Timeout | undefined;
  queued: QueuedTimeout | undefined;
  readonly timeoutMs: number;
  readonly timeouts: TimeoutQueue | undefined;
  readonly strict: boolean;
  /** What the fan-out comes to, given by `finished` (resolveWith, rejectWith). */
  readonly result: Promise<T>;
  #resolve!: (value: T | PromiseLike<T>) => void;
  #reject!: (error: unknown) => void;

  constructor(count: number, timeoutMs: number, timeouts: TimeoutQueue | undefined, strict: boolean) {
    this.timeoutMs = timeoutMs;
    this.timeouts = timeouts;
    this.strict = strict;
    this.result = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.tally.pending = count;
    for (let i = 0; i < count; i++) {
      this.answers.push(PENDING);
      this.outcomes.push(pendingOutcome(i));
    }
  }

  /** How a value reads as an outcome. */
  protected abstract classify(instance: number, value: R): InstanceOutcome;
  /** True once the outcomes so far (and their `tally`) settle the question. */
  protected abstract decided(): boolean;
  /** An answer that came after the decision or the timeout. Must not throw. */
  protected abstract late(instance: number, answer: Answer<R>): void;
  /** The question is settled (once): the outcomes are final; gives the result. Must not throw. */
  protected abstract finished(): void;
  /** Sends instance `instance` its call, which reports to this object. */
  protected abstract send(instance: number): void;

  /** Settles `result` (from `finished`). */
  protected resolveWith(value: T | PromiseLike<T>): void {
    this.#resolve(value);
  }

  /** Rejects `result` (from `finished`). */
  protected rejectWith(error: unknown): void {
    this.#reject(error);
  }

  /** Sends every call, then arms the timeout. */
  start(count: number): void {
    this.startedAt = performance.now();
    for (let i = 0; i < count; i++) {
      try {
        this.send(i);
      } catch (error) {
        // A sender that throws instead of reporting: an error answer, as a rejection would be (after this turn, as any answer).
        void Promise.resolve().then(() => this.fail(i, error));
      }
    }
    if (count === 0) this.finish();
    else this.arm();
  }

  ok(instance: number, value: R): void {
    if (this.strict && !this.done && performance.now() - this.startedAt > this.timeoutMs) this.expire();
    if (this.done) {
      this.late(instance, { state: 'ok', value });
      return;
    }
    let outcome: InstanceOutcome;
    try {
      outcome = this.classify(instance, value);
    } catch (error) {
      this.#failed(instance, error);
      if (this.tally.pending === 0 || this.decided()) this.finish();
      return;
    }
    const { tally } = this;
    this.answers[instance] = { state: 'ok', value };
    this.outcomes[instance] = outcome;
    tally.pending--;
    // Named fields: a computed key would be a megamorphic load and store.
    const { status } = outcome;
    if (status === 'granted' || status === 'ok') tally.yes++;
    else if (status === 'not-held') tally.notHeld++;
    else if (status === 'busy') tally.busy++;
    else tally.errors++;
    if (tally.pending === 0 || this.decided()) this.finish();
  }

  fail(instance: number, error: unknown): void {
    if (this.strict && !this.done && performance.now() - this.startedAt > this.timeoutMs) this.expire();
    if (this.done) {
      this.late(instance, { state: 'error', error });
      return;
    }
    this.#failed(instance, error);
    if (this.tally.pending === 0 || this.decided()) this.finish();
  }

  #failed(instance: number, error: unknown): void {
    this.answers[instance] = { state: 'error', error };
    this.outcomes[instance] = errorOutcome(instance, error);
    this.tally.pending--;
    this.tally.errors++;
  }

  /** Instances still silent become timeout errors, and the fan-out ends. */
  expire(): void {
    if (this.done) return;
    const error = new RedisTimeoutError(this.timeoutMs);
    for (let i = 0; i < this.outcomes.length; i++) {
      if (this.outcomes[i]!.status === 'pending') this.#failed(i, error);
    }
    this.finish();
  }

  finish(): void {
    this.done = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.queued !== undefined) this.timeouts!.cancel(this.queued);
    this.finished();
  }

  /**
   * Armed after the sends (a send that answers synchronously still settles
   * through a microtask). Through setImmediate: answers that arrived while
   * this process was busy are read (poll phase) before the timeout is
   * declared (check phase).
   */
  arm(): void {
    const { timeouts, timeoutMs } = this;
    const expire = () => setImmediate(() => this.expire());
    if (timeouts !== undefined && timeouts.ms === timeoutMs) {
      this.queued = timeouts.add(expire);
      return;
    }
    this.timer = setTimeout(expire, timeoutMs);
    this.timer.unref();
  }
}

/** A fan-out told what to do by its options (every one but the acquisition round). */
class OptionsFanOut<R> extends Collector<R, FanOutResult<R>> {
  readonly #sendTo: SendTo<R>;
  readonly #options: FanOutOptions<R>;

  constructor(count: number, sendTo: SendTo<R>, options: FanOutOptions<R>) {
    super(count, options.timeoutMs, options.timeouts, options.strict === true);
    this.#sendTo = sendTo;
    this.#options = options;
  }

  protected classify(instance: number, value: R): InstanceOutcome {
    return this.#options.classify(instance, value);
  }

  protected decided(): boolean {
    return this.#options.decided(this.outcomes, this.tally);
  }

  protected late(instance: number, answer: Answer<R>): void {
    this.#options.onLate?.(instance, answer);
  }

  protected finished(): void {
    this.resolveWith({ answers: this.answers, outcomes: this.outcomes, counts: this.tally });
  }

  protected send(instance: number): void {
    this.#sendTo(instance, this);
  }
}
