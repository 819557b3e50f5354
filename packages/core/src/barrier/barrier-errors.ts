import { CountMismatchError, HoldfastError, setFields } from '../errors/errors.js';

/**
 * Why a barrier's generation was broken: a waiting party was `lost` (its
 * lease ran out: the process crashed or froze, or its connection died), or
 * gave up: its `waitMs` ran out (`timeout`), its signal aborted (`aborted`),
 * or its client was closed (`closed`).
 */
export type BarrierBrokenReason = 'lost' | 'timeout' | 'aborted' | 'closed';

const REASON_TEXT: Readonly<Record<BarrierBrokenReason, string>> = {
  lost: "a waiting party's lease ran out (its process crashed or froze, or its connection died)",
  timeout: "a waiting party's waitMs ran out",
  aborted: "a waiting party's signal aborted",
  closed: "a waiting party's client was closed",
};

/**
 * The generation this party waited in was broken before it tripped (see
 * `BarrierBrokenReason`): every party waiting in it rejects with this error,
 * at once, and the next arrival starts a fresh generation.
 */
export class BarrierBrokenError extends HoldfastError {
  /** The barrier's name. */
  readonly barrierName!: string;
  /** The generation that was broken (the one its trip would have returned; the fresh one has the same number). */
  readonly generation!: number;
  /** Why it was broken. */
  readonly reason!: BarrierBrokenReason;

  constructor(barrierName: string, generation: number, reason: BarrierBrokenReason) {
    super('ERR_BARRIER_BROKEN', `Barrier \`${barrierName}\` generation ${generation} was broken: ${REASON_TEXT[reason]}`);
    setFields(this, { barrierName, generation, reason });
  }
}

/**
 * The barrier's party count stored in Redis differs from the `parties` this
 * client was given: arriving under either count could let parties through
 * at the wrong time, so nothing is done. Change the count explicitly with
 * `barrier.setParties(n)`, or create the barrier with the stored count.
 */
export class PartyCountMismatchError extends CountMismatchError {
  /** The barrier's name. */
  readonly barrierName: string;

  constructor(barrierName: string, expected: number, stored: number) {
    super('ERR_PARTY_COUNT_MISMATCH', `Barrier \`${barrierName}\``, 'parties', 'setParties', expected, stored);
    this.barrierName = barrierName;
  }
}
