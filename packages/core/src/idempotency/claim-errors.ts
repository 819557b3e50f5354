import { HoldfastError, setFields } from '../errors/errors.js';

/**
 * Another call of the same idempotency key is still running, and this one's
 * `waitMs` ran out first (at once with `waitMs: 0`): `fn` did not run here.
 * An HTTP API answers it with 409 Conflict; the client retries later.
 */
export class IdempotencyInProgressError extends HoldfastError {
  /** The idempotency's name (`client.idempotency(name)`). */
  readonly idempotency!: string;
  /** The request key. */
  readonly key!: string;
  /** How long the call waited, in ms. */
  readonly waitedMs!: number;

  constructor(name: string, key: string, waitedMs: number) {
    super('ERR_IDEMPOTENCY_IN_PROGRESS', `Request \`${key}\` of idempotency \`${name}\` is still running (waited ${waitedMs} ms)`);
    setFields(this, { idempotency: name, key, waitedMs });
  }
}

/**
 * The request key was first used with another fingerprint (another payload):
 * refused whether that first request is running or done, and `fn` did not
 * run. An HTTP API answers it with 422 Unprocessable Content.
 */
export class IdempotencyConflictError extends HoldfastError {
  /** The idempotency's name (`client.idempotency(name)`). */
  readonly idempotency!: string;
  /** The request key. */
  readonly key!: string;

  constructor(name: string, key: string) {
    super('ERR_IDEMPOTENCY_CONFLICT', `Request \`${key}\` of idempotency \`${name}\` was first made with another fingerprint`);
    setFields(this, { idempotency: name, key });
  }
}

/**
 * A result could not be stored: `serialize` threw or returned something other
 * than a well-formed string, or the serialized value is larger than
 * `maxValueBytes`. Nothing was stored and the claim was released (the caller
 * gets this error; a waiting duplicate, or the next call, runs `fn` again).
 */
export class ResultValueError extends HoldfastError {
  /** The key whose result it was. */
  readonly key!: string;
  /** The serialized size in UTF-8 bytes, when it was too large. */
  readonly bytes: number | undefined;

  constructor(key: string, detail: string, options?: { cause?: unknown; bytes?: number }) {
    super('ERR_RESULT_VALUE', `The result of \`${key}\` cannot be stored: ${detail}`, options);
    setFields(this, { key, bytes: options?.bytes });
  }
}

/** What a failed flight's error was: its `name`, `message` and `code` (when it had a string one). */
export interface FlightErrorData {
  /** The original error's `name` (`Error` for a thrown value that was not an Error). */
  readonly name: string;
  /** The original error's `message`. */
  readonly message: string;
  /** The original error's `code`, when it had a string one. */
  readonly code?: string;
}

/**
 * The flight this call joined, run by another process, rejected: `cause`
 * carries that error's `name`, `message` and `code` (the process that ran it
 * rejects with the error itself). The message is the original's.
 */
export class SingleFlightError extends HoldfastError {
  /** The flight's key. */
  readonly key: string;
  /** The original error's `name`, `message` and `code`. */
  declare readonly cause: FlightErrorData;

  constructor(key: string, data: FlightErrorData) {
    super('ERR_SINGLE_FLIGHT', data.message, { cause: data });
    this.key = key;
  }
}
