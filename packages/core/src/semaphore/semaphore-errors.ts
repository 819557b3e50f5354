import { CountMismatchError } from '../errors/errors.js';

/**
 * The semaphore's permit count stored in Redis differs from the `permits`
 * this client was given: acquiring under either count could admit more
 * holders than intended, so nothing is granted. Change the count explicitly
 * with `semaphore.setPermits(n)`, or create the semaphore with the stored count.
 */
export class PermitCountMismatchError extends CountMismatchError {
  /** The semaphore's name. */
  readonly semaphoreName: string;

  constructor(semaphoreName: string, expected: number, stored: number) {
    super('ERR_PERMIT_COUNT_MISMATCH', `Semaphore \`${semaphoreName}\``, 'permits', 'setPermits', expected, stored);
    this.semaphoreName = semaphoreName;
  }
}
