import { bunErrors } from './bun-errors.js';
import { glideErrors } from './glide-errors.js';
import { ioredisErrors } from './ioredis-errors.js';
import { nodeRedisErrors } from './node-redis-errors.js';

/**
 * What holdfast needs to know of a client's errors, asked of every adapter's
 * classification: the callers (redis-call.ts, Redlock's outcomes) hold an
 * error, not the port it came through, and an error is one client's or the
 * other's by its class, never both.
 */
const classifiers = [ioredisErrors, nodeRedisErrors, glideErrors, bunErrors];

/** Node's own socket failures, which either client passes on as they are. */
const SOCKET_FAILURE = /ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EHOSTUNREACH/i;

/**
 * True when `error` (or its `cause`, as holdfast wraps it) is an error the
 * server replied, whichever client carried it: the request reached Redis and
 * was refused (an ACL, a wrong type), unlike a connection failure.
 */
export function isServerReply(error: unknown): boolean {
  const inner = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return inner instanceof Error && classifiers.some((c) => c.isReply(inner));
}

/**
 * True when `error` is a failure of a client's connection, whichever client
 * carried it: the command may not have run, and another attempt may succeed.
 */
export function isConnectionFailure(error: unknown): boolean {
  return error instanceof Error && (SOCKET_FAILURE.test(error.message) || classifiers.some((c) => c.isConnectionFailure(error)));
}
