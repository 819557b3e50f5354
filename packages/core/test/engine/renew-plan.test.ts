import { planRenewal, RENEW_CHUNK } from '@holdfast/core/workspace';
import { describe, expect, it } from 'vitest';
import { groupByNode } from '../../src/engine/renew.js';

/** Renewal planning is pure: no Redis needed. */
describe('renewal planning', () => {
  const hold = (slot: number, leaseMs = 30_000) => ({ keys: { slot }, leaseMs });

  it('puts every hold of one server and lease length in chunks of RENEW_CHUNK', () => {
    const holds = Array.from({ length: RENEW_CHUNK * 2 + 1 }, (_, i) => hold(i));
    expect(planRenewal(holds, false).map((c) => c.length)).toEqual([RENEW_CHUNK, RENEW_CHUNK, 1]);
  });

  it('splits by hash slot on a Cluster and by lease length everywhere', () => {
    const holds = [hold(1), hold(2), hold(1), hold(1, 5_000)];
    expect(planRenewal(holds, true)).toEqual([[0, 2], [1], [3]]);
    expect(planRenewal(holds, false)).toEqual([[0, 1, 2], [3]]);
  });

  it('groups per-slot calls by the node serving the slot; unknown slots go alone', () => {
    const nodes: Record<number, string> = { 1: 'a', 2: 'b', 3: 'a' };
    const calls = [1, 2, 3, 4, 5];
    expect(groupByNode(calls, (slot) => slot, (slot) => nodes[slot])).toEqual([[1, 3], [2], [4], [5]]);
  });
});
