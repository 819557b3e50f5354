import type { ErrorClassifier } from './port.js';

/**
 * ioredis's errors, as holdfast classifies them: the one place that knows
 * their names and texts (ioredis's error classes are matched by name and
 * message, as no ioredis module is imported).
 */

/**
 * What ioredis says when a command failed with its connection: closed
 * (`Connection is closed.`, `Stream isn't writeable`), timed out
 * (`commandTimeout`), out of reconnection attempts for one command, or a
 * Cluster without a usable slot map or that kept redirecting.
 */
const CONNECTION_FAILURE =
  /Connection is closed|Command timed out|Stream isn't writeable|max retries|Failed to refresh slots cache|None of startup nodes|Too many Cluster redirections/i;

/** ioredis's error classification. */
export const ioredisErrors: ErrorClassifier = {
  // `ReplyError`: what the server answered.
  isReply: (error) => error.name === 'ReplyError',
  isConnectionFailure: (error) => error.name === 'MaxRetriesPerRequestError' || CONNECTION_FAILURE.test(error.message),
};
