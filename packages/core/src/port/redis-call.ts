import { performance } from 'node:perf_hooks';
import pRetry from 'p-retry';
import type { QueuedTimeout, TimeoutQueue } from './timeout-queue.js';
import { isConnectionFailure } from './errors.js';
import { onAbort } from './abort-listeners.js';
import { RedisCommandError, RedisTimeoutError, RedisUnreachableError, isHoldfastError } from '../errors/errors.js';

/** How every Redis round trip is bounded and retried. */
export interface CallPolicy {
  /** Longest wait for one reply. */
  readonly commandTimeoutMs: number;
  /** Retries of a transient failure when the caller has no deadline of its own. */
  readonly retries: number;
  /**
   * Asked before every attempt (see `ConnectionEpoch.reachable`): undefined
   * to send now, or a promise to wait for first (bounded by the attempt's
   * timeout), which rejects when no server can answer.
   */
  readonly reachable?: (() => Promise<void> | undefined) | undefined;
  /**
   * The timeouts of `commandTimeoutMs` on one timer (a client's own, cleared
   * at its close()): an attempt bounded by exactly that uses it instead of a
   * timer of its own. Shorter bounds (a deadline near) still get their own.
   */
  readonly timeouts?: TimeoutQueue | undefined;
}

export interface CallLimits {
  /** Monotonic time (performance.now()) after which no further attempt starts, and the attempt in flight is no longer waited for. */
  readonly deadline?: number | undefined;
  /** Its abort ends the call at once with its reason, the attempt in flight included (no longer waited for). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * The server's replies worth another attempt: its role or state, not the
 * request (a replica since a failover, loading its data, a Cluster slot
 * moving or a shard without a primary). Redis's words, whichever client carried them.
 */
const TRANSIENT_REPLY = /READONLY|LOADING|TRYAGAIN|CLUSTERDOWN|MASTERDOWN/i;

/** Errors worth another attempt: the connection or the server's role, not the request. */
export function isTransient(error: unknown): boolean {
  if (error instanceof RedisTimeoutError) return true;
  // A client that gave up reconnecting (`end`) never answers again.
  if (error instanceof RedisUnreachableError) return error.status !== 'end';
  if (!(error instanceof Error)) return false;
  // The client's own connection failures, as its adapter knows them (client/errors.ts).
  return isConnectionFailure(error) || TRANSIENT_REPLY.test(error.message);
}

/** Where one attempt's outcome goes: its reply, or its error (a RedisTimeoutError when it ran out). */
interface Outcome<T> {
  value(value: T): void;
  error(error: unknown): void;
}

/**
 * Resolves or rejects with `promise`, or rejects with RedisTimeoutError after
 * `ms`. The late outcome of `promise` is swallowed so it never surfaces as an
 * unhandled rejection.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => race(() => promise, ms, undefined, undefined, { value: resolve, error: reject }));
}

/**
 * `promise`, waited for no longer than the caller's limits allow: past the
 * deadline it rejects with RedisTimeoutError, on the signal's abort with its
 * reason (a signal aborted already: at once). Without either, `promise`
 * itself. What `promise` does later is left to run, its outcome swallowed:
 * for a wait shared with others (the server check, a subscription) that
 * this caller may stop waiting for.
 */
export function withinLimits<T>(promise: Promise<T>, limits: CallLimits): Promise<T> {
  const { deadline, signal } = limits;
  if (deadline === undefined && signal === undefined) return promise;
  if (signal?.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  const ms = deadline === undefined ? undefined : Math.max(1, Math.ceil(deadline - performance.now()));
  return new Promise<T>((resolve, reject) => race(() => promise, ms, undefined, signal, { value: resolve, error: reject }));
}

const NO_LIMITS: CallLimits = {};

/**
 * One logical Redis operation: each attempt bounded by `commandTimeoutMs`
 * (and by the caller's deadline), transient failures retried with backoff
 * until the deadline, the signal, or the retry budget ends. Every failure
 * comes out as a HoldfastError, or as the signal's reason. `map` turns the
 * reply into the result (a script's decoder): an error it throws rejects the
 * call as it is, and is never retried. p-retry takes over after a first
 * attempt that failed.
 */
export function callRedis<T>(attempt: () => Promise<T>, policy: CallPolicy, limits?: CallLimits): Promise<T>;
export function callRedis<T, R>(attempt: () => Promise<T>, policy: CallPolicy, limits: CallLimits | undefined, map: (value: T) => R): Promise<R>;
export function callRedis<T, R>(
  attempt: () => Promise<T>,
  policy: CallPolicy,
  limits: CallLimits = NO_LIMITS,
  map?: (value: T) => R,
): Promise<T | R> {
  return new Promise<T | R>((resolve, reject) => {
    boundedAttempt(attempt, policy, limits, new Call(attempt, policy, limits, map, resolve, reject));
  });
}

/** A callRedis in progress: the first attempt's outcome, and what follows it. */
class Call<T, R> implements Outcome<T> {
  readonly #attempt: () => Promise<T>;
  readonly #policy: CallPolicy;
  readonly #limits: CallLimits;
  readonly #map: ((value: T) => R) | undefined;
  readonly #resolve: (value: T | R) => void;
  readonly #reject: (error: unknown) => void;

  constructor(
    attempt: () => Promise<T>,
    policy: CallPolicy,
    limits: CallLimits,
    map: ((value: T) => R) | undefined,
    resolve: (value: T | R) => void,
    reject: (error: unknown) => void,
  ) {
    this.#attempt = attempt;
    this.#policy = policy;
    this.#limits = limits;
    this.#map = map;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  value(value: T): void {
    const map = this.#map;
    if (!map) return this.#resolve(value);
    let result: R;
    try {
      result = map(value);
    } catch (error) {
      return this.#reject(error);
    }
    this.#resolve(result);
  }

  error(error: unknown): void {
    const limits = this.#limits;
    const retries = limits.deadline === undefined ? this.#policy.retries : Number.POSITIVE_INFINITY;
    if (retries === 0 || !isTransient(error) || remainingMs(limits) <= 0 || limits.signal?.aborted) {
      return this.#reject(failure(error, limits.signal));
    }
    retryAttempts(this.#attempt, this.#policy, limits, retries - 1).then(
      (value) => this.value(value),
      (later: unknown) => this.#reject(failure(later, limits.signal)),
    );
  }
}

/** Milliseconds left before the caller's deadline (Infinity without one). */
function remainingMs(limits: CallLimits): number {
  return limits.deadline === undefined ? Infinity : limits.deadline - performance.now();
}

/** How a failed call rejects: the signal's reason once it aborted, else a HoldfastError. */
function failure(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason;
  if (isHoldfastError(error)) return error;
  return new RedisCommandError(`Redis call failed: ${errorText(error)}`, { cause: error });
}

/**
 * One attempt, bounded: `outcome` gets its reply, or its error or a
 * RedisTimeoutError, exactly once. An outcome after the timeout is swallowed,
 * never an unhandled rejection.
 */
function boundedAttempt<T>(attempt: () => Promise<T>, policy: CallPolicy, limits: CallLimits, outcome: Outcome<T>): void {
  // Bounded by the caller's deadline too: a wait ends at its `waitMs`, not up to one command timeout later.
  const timeoutMs = Math.max(1, Math.min(policy.commandTimeoutMs, remainingMs(limits)));
  const { signal } = limits;
  let wait: Promise<void> | undefined;
  try {
    wait = policy.reachable?.();
  } catch (error) {
    return outcome.error(error);
  }
  if (!wait) return race(attempt, timeoutMs, policy.timeouts, signal, outcome);
  // The attempt starts only once the connection allows it, and never after its timeout.
  const startedAt = performance.now();
  const waiting = wait;
  race(() => waiting, timeoutMs, policy.timeouts, signal, {
    value: () => race(attempt, Math.max(1, timeoutMs - (performance.now() - startedAt)), policy.timeouts, signal, outcome),
    error: (error) => outcome.error(error),
  });
}

/**
 * `start()`'s outcome, or a RedisTimeoutError after `ms` (none when
 * undefined), or the signal's reason when it aborts, whichever comes first
 * (a throw from `start` is its outcome). The timeout goes on `queue` when it
 * lasts the queue's `ms`, else on a timer of its own.
 */
function race<T>(start: () => Promise<T>, ms: number | undefined, queue: TimeoutQueue | undefined, signal: AbortSignal | undefined, outcome: Outcome<T>): void {
  let promise: Promise<T>;
  try {
    promise = start();
  } catch (error) {
    return outcome.error(error);
  }
  new Race(promise, ms, queue, signal, outcome);
}

/**
 * One attempt in flight against its timeout and the caller's signal:
 * whichever comes first reaches `outcome`, the others are dropped. The
 * attempt itself is not withdrawn (Redis may still apply it): its caller
 * undoes it by its request id, as after any call it stopped waiting for.
 */
class Race<T> {
  readonly #ms: number;
  readonly #queue: TimeoutQueue | undefined;
  readonly #outcome: Outcome<T>;
  #done = false;
  #timer: NodeJS.Timeout | undefined;
  #queued: QueuedTimeout | undefined;
  #unwatch: (() => void) | undefined;

  constructor(promise: Promise<T>, ms: number | undefined, queue: TimeoutQueue | undefined, signal: AbortSignal | undefined, outcome: Outcome<T>) {
    this.#ms = ms ?? 0;
    this.#queue = queue;
    this.#outcome = outcome;
    const expire = () => this.#expire();
    if (ms === undefined) {
      // No timeout: the signal alone (withinLimits).
    } else if (queue !== undefined && queue.ms === ms) this.#queued = queue.add(expire);
    else {
      this.#timer = setTimeout(expire, ms);
      this.#timer.unref();
    }
    if (signal !== undefined) {
      if (signal.aborted) this.#abort(signal.reason);
      else this.#unwatch = onAbort(signal, () => this.#abort(signal.reason));
    }
    promise.then(
      (value) => {
        if (this.#stop()) this.#outcome.value(value);
      },
      (error: unknown) => {
        if (this.#stop()) this.#outcome.error(error);
      },
    );
  }

  /** False when the timeout or the signal came first; else drops both, and true. */
  #stop(): boolean {
    if (this.#done) return false;
    this.#done = true;
    if (this.#queued !== undefined) this.#queue!.cancel(this.#queued);
    else if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#unwatch !== undefined) this.#unwatch();
    return true;
  }

  #expire(): void {
    this.#queued = undefined;
    this.#timer = undefined;
    if (this.#stop()) this.#outcome.error(new RedisTimeoutError(this.#ms));
  }

  #abort(reason: unknown): void {
    if (this.#stop()) this.#outcome.error(reason);
  }
}

/** The attempts after a first transient failure, with p-retry's backoff. */
function retryAttempts<T>(attempt: () => Promise<T>, policy: CallPolicy, limits: CallLimits, retries: number): Promise<T> {
  const bounded = () =>
    new Promise<T>((resolve, reject) => boundedAttempt(attempt, policy, limits, { value: resolve, error: reject }));
  const { deadline, signal } = limits;
  // p-retry listens on the signal it is given during each back-off: a signal
  // of this call's own, so the caller's keeps one listener (onAbort) however
  // many calls retry on it.
  let stop: AbortController | undefined;
  let unwatch: (() => void) | undefined;
  if (signal !== undefined) {
    const own = new AbortController();
    if (signal.aborted) own.abort(signal.reason);
    else unwatch = onAbort(signal, () => own.abort(signal.reason));
    stop = own;
  }
  const retrying = pRetry(bounded, {
    retries,
    minTimeout: 20,
    maxTimeout: 1_000,
    factor: 2,
    randomize: true,
    unref: true,
    signal: stop?.signal,
    maxRetryTime: deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, remainingMs(limits)),
    shouldRetry: ({ error }) => isTransient(error) && remainingMs(limits) > 0,
  });
  if (unwatch === undefined) return retrying;
  const done = unwatch;
  return retrying.finally(done);
}

/**
 * What a client's error says, for a message. Some errors carry no message at all (node-redis 6
 * gives up a command queued for a connection that never came with an empty one): their class
 * name then says at least what failed.
 */
export function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.message || `${error.name} (no message)`;
}
