import { RedisTimeoutError, RedisUnreachableError } from '../errors/errors.js';
import type { ErrorClassifier } from './port.js';

/**
 * Valkey GLIDE's errors, as holdfast classifies and reports them: the one
 * place that knows them (matched by class name, as no GLIDE module is
 * imported).
 *
 * GLIDE rewrites every error reply of the server: `ERR x` comes as
 * `An error was signalled by the server: - ResponseError: x`, `NOSCRIPT x` as
 * `… - NoScriptError: x`, `NOPERM x` as `… - PermissionDenied: x`, and codes
 * its core does not know (`WRONGTYPE`, `OOM`, a script's own
 * `error_reply('HFERR boom')`) as `CODE: text`. Holdfast and its users read
 * Redis's words (`NOSCRIPT` starts runScript's fallback, `unknown command`
 * switches to classic pub/sub, `READONLY` is retried), so a reply is given
 * back its text as the server sent it, in a GlideReplyError whose `cause` is
 * GLIDE's error.
 */

/** GLIDE's name for each error code its core knows (redis-rs's error kinds), and the code Redis sent. */
const KINDS: Record<string, string> = {
  ResponseError: 'ERR',
  NoScriptError: 'NOSCRIPT',
  PermissionDenied: 'NOPERM',
  ExecAbortError: 'EXECABORT',
  BusyLoadingError: 'LOADING',
  Moved: 'MOVED',
  Ask: 'ASK',
  TryAgain: 'TRYAGAIN',
  ClusterDown: 'CLUSTERDOWN',
  CrossSlot: 'CROSSSLOT',
  MasterDown: 'MASTERDOWN',
  ReadOnly: 'READONLY',
  NotBusy: 'NOTBUSY',
  AuthenticationFailed: 'WRONGPASS',
};

/** `An error was signalled by the server: - Kind: text` (a code GLIDE's core knows). */
const SIGNALLED = /^An error was signalled by the server: - (\w+): ([\s\S]*)$/;
/** `CODE: text` (a code it does not know: WRONGTYPE, OOM, a script's own error reply). */
const EXTENSION = /^([A-Z][A-Z0-9_-]*): ([\s\S]*)$/;

/** A server's error reply that came through GLIDE, with Redis's text (`NOSCRIPT No matching script…`). */
export class GlideReplyError extends Error {
  override readonly name = 'GlideReplyError';
}

/** GLIDE's error classification. */
export const glideErrors: ErrorClassifier = {
  // GLIDE's own `RequestError` too: holdfast reports the error it maps (GlideReplyError) with GLIDE's as its `cause`.
  isReply: (error) => error.name === 'GlideReplyError' || (error.constructor.name === 'RequestError' && serverText(error.message) !== undefined),
  // `ConnectionError`: the connection was lost with the request (GLIDE does not resend it).
  isConnectionFailure: (error) => error.constructor.name === 'ConnectionError',
};

/** The server's text of a GLIDE `RequestError`, or undefined when GLIDE itself failed the request. */
export function serverText(message: string): string | undefined {
  const signalled = SIGNALLED.exec(message);
  if (signalled) {
    const code = KINDS[signalled[1]!];
    return code === undefined ? `${signalled[1]} ${signalled[2]}` : `${code} ${signalled[2]}`;
  }
  const extension = EXTENSION.exec(message);
  return extension ? `${extension[1]} ${extension[2]}` : undefined;
}

/**
 * A GLIDE error as holdfast reports it:
 * - a server's reply (a plain `RequestError` with the server's rewritten
 *   text): GlideReplyError with Redis's text;
 * - `TimeoutError` (GLIDE gave up after its `requestTimeout`; the request
 *   may still run at the server): RedisTimeoutError, transient like holdfast's
 *   own `commandTimeoutMs`;
 * - `ClosingError` (the application closed the client): RedisUnreachableError
 *   with status `end`, never retried;
 * - `ConnectionError` (the connection was lost with the request; GLIDE does
 *   not resend it) and anything else: as it is (the classifier above knows
 *   the connection failures).
 */
export function mapGlideError(error: unknown, requestTimeoutMs: number): unknown {
  if (!(error instanceof Error)) return error;
  switch (error.constructor.name) {
    case 'ClosingError':
      // Closed by the application, or by GLIDE itself (no initial connection): the reason is GLIDE's message.
      return new RedisUnreachableError('end', `The GLIDE client is closed (${error.message.trim()}): it sends nothing any more`, { cause: error });
    case 'TimeoutError': {
      const timeout = new RedisTimeoutError(requestTimeoutMs);
      Object.defineProperty(timeout, 'cause', { value: error, configurable: true, writable: true });
      return timeout;
    }
    case 'RequestError': {
      const text = serverText(error.message);
      return text === undefined ? error : new GlideReplyError(text, { cause: error });
    }
    default:
      return error;
  }
}
