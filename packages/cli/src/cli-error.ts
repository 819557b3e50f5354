import { ReplyError } from 'ioredis';
/** Exit codes of the `holdfast` command, one per kind of failure a script may act on. */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** Anything not listed below (a Redis error reply, a bug). */
  failed: 1,
  /** Wrong arguments or options. */
  usage: 2,
  /** Nothing held under the prefix (`ls`), or no lock of that name (`inspect`, `release`). */
  notFound: 3,
  /** The server could not be reached (wrong URL, port, TLS). */
  unreachable: 4,
  /** The server refused the credentials (wrong password, unknown ACL user) or a command (ACL). */
  denied: 5,
  /** `release` was not confirmed. */
  aborted: 6,
  /** The key of that name holds data holdfast did not write: not a lock. */
  notALock: 7,
} as const;

/** A failure the command reports as one line and an exit code. */
export class CliError extends Error {
  /** The process exit code. */
  readonly exitCode: number;

  constructor(exitCode: number, message: string) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/** Error replies that refuse credentials or a command: exit code `denied`. */
export const ACCESS_DENIED = /^(WRONGPASS|NOAUTH|NOPERM)\b/;

/** True for an error reply of the server (ioredis's ReplyError), as opposed to a connection failure. */
export function isReplyError(error: unknown): boolean {
  return error instanceof ReplyError;
}

/**
 * The CliError an error from ioredis stands for: a server's error reply is access denied
 * (WRONGPASS, NOAUTH, NOPERM) or a plain failure; any other error naming the connection
 * (refused, timed out, TLS) is unreachable.
 */
export function cliErrorOf(error: unknown): CliError {
  if (error instanceof CliError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isReplyError(error)) {
    return ACCESS_DENIED.test(message) ? new CliError(EXIT.denied, `Access denied by Redis: ${message}`) : new CliError(EXIT.failed, message);
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|connect|Connection is closed|startup nodes|TLS|SSL|certificate/i.test(message)) {
    return new CliError(EXIT.unreachable, `Cannot reach Redis: ${message}`);
  }
  return new CliError(EXIT.failed, message);
}
