import { RedisUnreachableError } from '../errors/errors.js';
import type { ErrorClassifier } from './port.js';

/**
 * node-redis's error classes, as holdfast classifies and reports them: the
 * one place that knows them (matched by class name, as no node-redis module
 * is imported).
 */

/** node-redis's connection failures: the command may not have run, and another attempt may succeed. */
const CONNECTION_FAILURES = new Set([
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
const REPLIES = new Set(['ErrorReply', 'SimpleError', 'BlobError']);

/** node-redis's error classification. */
export const nodeRedisErrors: ErrorClassifier = {
  isReply: (error) => REPLIES.has(error.constructor.name),
  isConnectionFailure: (error) => CONNECTION_FAILURES.has(error.constructor.name),
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
