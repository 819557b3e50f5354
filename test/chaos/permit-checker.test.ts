import { describe, expect, it } from 'vitest';
import { type EventType, type HistoryEvent, checkPermits } from '@holdfast/test-utils/models';

/** The permit checker on hand-written histories: it must catch what it is there to catch. */
describe('permit checker', () => {
  const ev = (t: number, holder: string, type: EventType, extra: Partial<HistoryEvent> = {}): HistoryEvent => ({
    t: BigInt(t),
    holder,
    lock: 'pool',
    type,
    ...extra,
  });

  it('accepts holders within the count, a hand-off at the same instant included', () => {
    const result = checkPermits(
      [
        ev(1, 'a', 'acquire-ok', { value: 2, token: 1 }),
        ev(2, 'b', 'acquire-ok', { value: 1, token: 2 }),
        ev(3, 'a', 'release-invoke'),
        ev(3, 'c', 'acquire-ok', { value: 2, token: 3 }),
        ev(4, 'b', 'lost', { reason: 'expired' }),
        ev(5, 'd', 'acquire-ok', { value: 1, token: 4 }),
      ],
      3,
    );
    expect(result).toMatchObject({ peak: 3, excess: [], duplicateTokens: [], sections: 4 });
  });

  it('reports every instant more permits were believed held, and repeated tokens', () => {
    const result = checkPermits(
      [
        ev(1, 'a', 'acquire-ok', { value: 2, token: 1 }),
        ev(2, 'b', 'acquire-ok', { value: 2, token: 2 }),
        ev(3, 'c', 'acquire-ok', { value: 1, token: 2 }),
        ev(4, 'a', 'release-invoke'),
      ],
      3,
    );
    expect(result.peak).toBe(5);
    expect(result.excess.map((e) => e.inUse)).toEqual([4, 5]);
    expect(result.excess[1]!.holders.sort()).toEqual(['a', 'b', 'c']);
    expect(result.duplicateTokens).toEqual([2]);
  });
});
