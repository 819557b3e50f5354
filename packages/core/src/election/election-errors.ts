import { HoldfastError, type LostReason, setFields } from '../errors/errors.js';

/**
 * A term ended without being resigned: this process is no longer the
 * election's leader, and may not have been since before this error was
 * raised only by the margin kept for clock drift (never after another
 * candidate could be elected). A term's `signal` aborts with it; `proclaim()`
 * and `resign()` on a lost term reject with it. Its `cause` is the
 * `LockLostError` the client reported (`lost` event).
 */
export class LeadershipLostError extends HoldfastError {
  /** The election whose term was lost. */
  readonly electionName!: string;
  /** The lost term's epoch (fencing token). */
  readonly epoch!: number;
  /** How the term was lost (as a lock's lease is: `expired`, `unreachable`, `taken`, `deleted`). */
  readonly reason!: LostReason;

  constructor(electionName: string, epoch: number, reason: LostReason, options?: { cause?: unknown }) {
    super('ERR_LEADERSHIP_LOST', `Leadership of election \`${electionName}\` (epoch ${epoch}) was lost: ${REASON_TEXT[reason]}`, options);
    setFields(this, { electionName, epoch, reason });
  }
}

const REASON_TEXT: Readonly<Record<LostReason, string>> = {
  expired: 'the term ran out before it was renewed',
  unreachable: 'Redis could not be reached to renew the term before it ran out',
  taken: 'another candidate holds the term',
  deleted: 'the term is gone from Redis',
  closed: 'the client was closed',
};
