/**
 * The one place run sizes are chosen. `pnpm test` runs the CI sizes (a few
 * seconds per scenario); `pnpm chaos` sets HOLDFAST_CHAOS=full for the sizes
 * the bounds are stated at.
 */
export const FULL = process.env.HOLDFAST_CHAOS === 'full';

export const SIZES = FULL
  ? {
      baseline: { processes: 4, workers: 4, sections: 10_000 },
      pauseTrials: 20,
      hangRuns: 10,
      lostReplyTrials: 1000,
      renewReleaseCycles: 10_000,
      stormMs: 15_000,
      redlockRuns: 5,
    }
  : {
      baseline: { processes: 2, workers: 2, sections: 400 },
      pauseTrials: 2,
      hangRuns: 2,
      lostReplyTrials: 60,
      renewReleaseCycles: 300,
      stormMs: 2_000,
      redlockRuns: 1,
    };

/** Per-test timeout: generous, since the bounds are asserted on results, never on speed. */
export const TIMEOUT_MS = FULL ? 900_000 : 60_000;
