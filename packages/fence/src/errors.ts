import { HoldfastError } from '@holdfast/core';

/** Every `code` an error of `@holdfast/fence` can carry (core's errors carry core's). */
export type FenceErrorCode = 'ERR_FENCED_OFF' | 'ERR_TRANSACTION_ABORTED';

/**
 * A newer lock holder has already written the resource: the stored fencing
 * token is greater than the one offered. The transaction was rolled back
 * before `fn` ran, so nothing of it was committed. The holder that gets this
 * has lost its lock (paused, partitioned, or its lease ran out) and must not
 * retry with the same token.
 */
export class FencedOffError extends HoldfastError<FenceErrorCode> {
  /** The resource whose fence refused the write. */
  readonly resource: string;
  /** The token offered (the stale holder's). */
  readonly token: number;
  /** The token stored at the resource: the newest holder that wrote it. */
  readonly currentToken: number;

  constructor(resource: string, token: number, currentToken: number) {
    super(
      'ERR_FENCED_OFF',
      `Resource \`${resource}\` refused token ${token}: a holder with token ${currentToken} already wrote it ` +
        '(this holder lost its lock; the transaction was rolled back)',
    );
    this.resource = resource;
    this.token = token;
    this.currentToken = currentToken;
  }
}

/**
 * PostgreSQL ended the transaction with a rollback at `COMMIT`: a statement in
 * `fn` failed and `fn` caught its error and returned anyway (a failed
 * statement aborts a PostgreSQL transaction, and `COMMIT` then rolls it back).
 * Nothing of the transaction was committed.
 */
export class TransactionAbortedError extends HoldfastError<FenceErrorCode> {
  constructor() {
    super(
      'ERR_TRANSACTION_ABORTED',
      'The fenced transaction was rolled back at COMMIT: a statement in it failed and its error was caught inside fn',
    );
  }
}
