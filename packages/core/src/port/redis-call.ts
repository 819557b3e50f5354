import pRetry from 'p-retry';
import { isConnectionFailure } from './errors.js';
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
}

export interface CallLimits {
  /** Monotonic time (performance.now()) after which no further attempt starts. */
  readonly deadline?: number | undefined;
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

/**
 * Resolves or rejects with `promise`, or rejects with RedisTimeoutError after
 * `ms`. The late outcome of `promise` is swallowed so it never surfaces as an
 * unhandled rejection.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  promise.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new RedisTimeoutError(ms)), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * One logical Redis operation: each attempt bounded by `commandTimeoutMs`
 * (and by the caller's deadline), transient failures retried with backoff
 * until the deadline, the signal, or the retry budget ends. Every failure
 * comes out as a HoldfastError, or as the signal's reason.
 */
export async function callRedis<T>(
  attempt: () => Promise<T>,
  policy: CallPolicy,
  limits: CallLimits = {},
): Promise<T> {
  const { deadline, signal } = limits;
  const remaining = () => (deadline === undefined ? Infinity : deadline - performance.now());
  const bounded = () => {
    const timeoutMs = Math.max(1, Math.min(policy.commandTimeoutMs, remaining()));
    const wait = policy.reachable?.();
    if (!wait) return withTimeout(attempt(), timeoutMs);
    // The attempt starts only once the connection allows it, and never after its timeout.
    const startedAt = performance.now();
    return withTimeout(wait, timeoutMs).then(() =>
      withTimeout(attempt(), Math.max(1, timeoutMs - (performance.now() - startedAt))),
    );
  };
  const retries = deadline === undefined ? policy.retries : Number.POSITIVE_INFINITY;
  try {
    // The first attempt goes out directly: p-retry's bookkeeping is only paid after a failure.
    try {
      return await bounded();
    } catch (error) {
      if (retries === 0 || !isTransient(error) || remaining() <= 0 || signal?.aborted) throw error;
    }
    return await pRetry(bounded, {
      retries: retries - 1,
      minTimeout: 20,
      maxTimeout: 1_000,
      factor: 2,
      randomize: true,
      unref: true,
      signal,
      maxRetryTime: deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, remaining()),
      shouldRetry: ({ error }) => isTransient(error) && remaining() > 0,
    });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (isHoldfastError(error)) throw error;
    throw new RedisCommandError(`Redis call failed: ${errorText(error)}`, { cause: error });
  }
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
