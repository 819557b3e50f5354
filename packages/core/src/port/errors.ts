import { RedisUnreachableError } from '../errors/errors.js';
import { bunErrors } from './bun-errors.js';
import { glideErrors } from './glide-errors.js';
import type { ErrorClassifier } from './port.js';

/**
 * What ioredis says when a command failed with its connection: closed
 * (`Connection is closed.`, `Stream isn't writeable`), timed out
 * (`commandTimeout`), out of reconnection attempts for one command, or a
 * Cluster without a usable slot map or that kept redirecting.
 */
const IOREDIS_CONNECTION_FAILURE =
  /Connection is closed|Command timed out|Stream isn't writeable|max retries|Failed to refresh slots cache|None of startup nodes|Too many Cluster redirections/i;

/**
 * ioredis's error classification: its error classes are matched by name and
 * message, as no ioredis module is imported.
 */
const ioredisErrors: ErrorClassifier = {
  // `ReplyError`: what the server answered.
  isReply: (error) => error.name === 'ReplyError',
  isConnectionFailure: (error) => error.name === 'MaxRetriesPerRequestError' || IOREDIS_CONNECTION_FAILURE.test(error.message),
};

/** node-redis's connection failures: the command may not have run, and another attempt may succeed. */
const NODE_REDIS_CONNECTION_FAILURES = new Set([
  'SocketClosedUnexpectedlyError',
  'ClientOfflineError',
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'DisconnectsClientError',
  'ReconnectStrategyError',
  'RootNodesUnavailableError',
  'SocketTimeoutDuringMaintenanceError',
  'CommandTimeoutDuringMaintenanceError',
]);

/** Replies from the server: `ErrorReply` and its subclasses. */
const NODE_REDIS_REPLIES = new Set(['ErrorReply', 'SimpleError', 'BlobError']);

/**
 * A refusal of node-redis's own connection handshake (`CLIENT SETINFO`, unknown to servers before
 * 7.2) handed to a command written around a reconnection (seen under connection resets): that
 * command's own reply went elsewhere, so whether it ran is unknown, as after a connection failure;
 * another attempt (the same request id) settles it.
 */
const NODE_REDIS_HANDSHAKE_REPLY = /unknown subcommand 'SETINFO'/i;

/** node-redis's error classification (by class name, as no node-redis module is imported). */
const nodeRedisErrors: ErrorClassifier = {
  isReply: (error) => NODE_REDIS_REPLIES.has(error.constructor.name) && !NODE_REDIS_HANDSHAKE_REPLY.test(error.message),
  isConnectionFailure: (error) =>
    NODE_REDIS_CONNECTION_FAILURES.has(error.constructor.name) ||
    (NODE_REDIS_REPLIES.has(error.constructor.name) && NODE_REDIS_HANDSHAKE_REPLY.test(error.message)),
};

/**
 * A node-redis error as holdfast reports it. Replies from the server
 * (NOSCRIPT, READONLY, ...) and connection failures are passed on as they are
 * (the failures are retried like ioredis's, then come out as
 * RedisCommandError). A client the application closed (`ClientClosedError`)
 * never answers again: RedisUnreachableError with status `end`, not retried.
 */
export function mapNodeRedisError(error: unknown): unknown {
  if (error instanceof Error && error.constructor.name === 'ClientClosedError') {
    return new RedisUnreachableError('end', 'The node-redis client is closed: it sends nothing any more', { cause: error });
  }
  return error;
}

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
