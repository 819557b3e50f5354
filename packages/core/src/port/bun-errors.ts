import { RedisCommandError, RedisUnreachableError } from '../errors/errors.js';
import type { ErrorClassifier } from './port.js';

/**
 * The errors of Bun's built-in `RedisClient` (`import { RedisClient } from
 * 'bun'`), as holdfast classifies and reports them: the one place that knows
 * them. Bun gives every failure the name `RedisError` and a `code`; a server's
 * error reply keeps Redis's text (`NOSCRIPT No matching script…`, `NOPERM …`,
 * `WRONGTYPE …`, a script's own `error_reply`), so it is passed on as it is.
 */

/** A server's error reply. */
const SERVER_ERROR = 'ERR_REDIS_SERVER_ERROR';
/** Bun's code for a connection that was lost, closed, or given up on. */
const CONNECTION_CLOSED = 'ERR_REDIS_CONNECTION_CLOSED';
/** Bun's other connection failures: the connection could not be made in `connectionTimeout`, or sat idle past `idleTimeout`. */
const CONNECTION_FAILURES = new Set([CONNECTION_CLOSED, 'ERR_REDIS_CONNECTION_TIMEOUT', 'ERR_REDIS_IDLE_TIMEOUT']);
/**
 * The texts of ERR_REDIS_CONNECTION_CLOSED when the client will not connect
 * again by itself: closed by the application (`close()`), or out of
 * reconnection attempts (`maxRetries`). Either way only the application's
 * `connect()` brings it back.
 */
const GIVEN_UP = /^(Connection has failed|Max reconnection attempts reached)/;

/** Bun's error code, when `error` is one of its `RedisClient`'s. */
function bunCode(error: Error): string | undefined {
  const code = (error as { code?: unknown }).code;
  return error.name === 'RedisError' && typeof code === 'string' ? code : undefined;
}

/** Bun's `RedisClient` error classification. */
export const bunErrors: ErrorClassifier = {
  isReply: (error) => bunCode(error) === SERVER_ERROR,
  // A command on a lost connection fails with it and is not resent by Bun: core retries it, its request id keeps that exact.
  isConnectionFailure: (error) => {
    const code = bunCode(error);
    return code !== undefined && CONNECTION_FAILURES.has(code) && !GIVEN_UP.test(error.message);
  },
};

/**
 * A Bun error as holdfast reports it: a client that will not connect again
 * by itself (closed, or out of `maxRetries`) as RedisUnreachableError `end`,
 * never retried; anything else as it is (the classifier above knows the
 * replies and the connection failures).
 */
export function mapBunError(error: unknown): unknown {
  if (error instanceof Error && bunCode(error) === CONNECTION_CLOSED && GIVEN_UP.test(error.message)) {
    return new RedisUnreachableError(
      'end',
      "Bun's RedisClient is closed (by the application, or out of reconnection attempts: its `maxRetries`): it sends nothing until its connect() is called",
      { cause: error },
    );
  }
  return error;
}

/** The refusal Waiters reads as "no sharded pub/sub here: use classic" (the scripts then PUBLISH). */
export function noShardedPubSub(): RedisCommandError {
  return new RedisCommandError("ERR unknown command 'SSUBSCRIBE': Bun's RedisClient has no sharded pub/sub (holdfast subscribes with SUBSCRIBE, and its scripts PUBLISH)");
}
