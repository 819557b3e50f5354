import { describe, expect, it } from 'vitest';
import { buildTenures, type HistoryEvent, findRwTokenViolations, findWriterOverlaps, rwLockName } from '@holdfast/test-utils/models';

/** The read-write checks on hand-made histories: each rule caught, and legal histories passed. */
describe('read-write lock history checks', () => {
  const ev = (t: number, holder: string, side: 'read' | 'write', type: HistoryEvent['type'], token?: number): HistoryEvent => ({
    t: BigInt(t),
    holder,
    lock: rwLockName('doc', side),
    type,
    ...(token === undefined ? {} : { token, holdCount: 1 }),
  });
  const hold = (holder: string, side: 'read' | 'write', from: number, to: number, token: number) => [
    ev(from, holder, side, 'acquire-invoke'),
    ev(from + 1, holder, side, 'acquire-ok', token),
    ev(to, holder, side, 'release-invoke'),
  ];
  const check = (...holds: HistoryEvent[][]) => {
    const history = holds.flat().sort((a, b) => (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
    const { tenures } = buildTenures(history);
    return { overlaps: findWriterOverlaps(tenures), tokens: findRwTokenViolations(tenures) };
  };

  it('passes readers sharing, then a writer alone, then readers again, and a downgrade', () => {
    const result = check(
      hold('r1', 'read', 0, 50, 3),
      hold('r2', 'read', 10, 60, 3),
      hold('w1', 'write', 61, 100, 4),
      hold('w1', 'read', 90, 130, 4), // the writer's own read (downgrade)
      hold('r3', 'read', 110, 140, 4),
    );
    expect(result).toEqual({ overlaps: [], tokens: [] });
  });

  it('catches a writer overlapping a reader, and one overlapping a writer', () => {
    expect(check(hold('r1', 'read', 0, 50, 3), hold('w1', 'write', 40, 80, 4)).overlaps).toHaveLength(1);
    expect(check(hold('w1', 'write', 0, 50, 3), hold('w2', 'write', 40, 80, 4)).overlaps).toHaveLength(1);
    expect(check(hold('w1', 'write', 0, 50, 3), hold('r1', 'read', 20, 30, 3)).overlaps).toHaveLength(1);
  });

  it('catches each token rule', () => {
    const rules = (...holds: HistoryEvent[][]) => check(...holds).tokens.map((v) => v.rule);
    expect(rules(hold('r1', 'read', 0, 10, 5), hold('w1', 'write', 20, 30, 5))).toContain('write-not-above-earlier');
    expect(rules(hold('w1', 'write', 0, 10, 5), hold('r1', 'read', 20, 30, 4))).toContain('read-below-earlier-write');
    expect(rules(hold('r1', 'read', 0, 10, 6), hold('w1', 'write', 20, 30, 6))).toContain('later-write-not-above-read');
  });
});
