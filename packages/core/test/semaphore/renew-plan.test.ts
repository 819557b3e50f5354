import { planRenewal, semaphoreScripts } from '@holdfast/core/workspace';
import { describe, expect, it } from 'vitest';

/** Renewal planning with holds of several kinds: one renew script per call. */
describe('renewal planning across kinds', () => {
  const lock = (slot: number, leaseMs = 30_000) => ({ keys: { slot }, leaseMs });
  const permits = (slot: number, leaseMs = 30_000) => ({ keys: { slot }, leaseMs, kind: { renew: semaphoreScripts.renew } });

  it('splits by renew script as well as by slot and lease length', () => {
    const holds = [lock(1), permits(1), lock(1), permits(1), permits(2), permits(1, 5_000)];
    expect(planRenewal(holds, false)).toEqual([[0, 2], [1, 3, 4], [5]]);
    expect(planRenewal(holds, true)).toEqual([[0, 2], [1, 3], [4], [5]]);
  });
});
