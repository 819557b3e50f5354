import { describe, expect, it } from 'vitest';
import { checkHistory, expandMultiLock, type MultiLockEvent, type EventType } from '@holdfast/test-utils/models';

function ev(t: number, holder: string, type: EventType, fields: Partial<MultiLockEvent> = {}): MultiLockEvent {
  return { t: BigInt(t), holder, lock: 'multi', type, ...fields };
}

/** A multi-lock section over `locks` with `tokens`, from t to t + length. */
function multi(t: number, holder: string, locks: string[], tokens: number[], length = 3): MultiLockEvent[] {
  return [
    ev(t, holder, 'acquire-invoke', { locks }),
    ev(t + 1, holder, 'acquire-ok', { locks, tokens, holdCount: 1 }),
    ev(t + length - 1, holder, 'release-invoke', { locks, holdCount: 1 }),
    ev(t + length, holder, 'release-ok', { locks }),
  ];
}

const byTime = (history: MultiLockEvent[]) => [...history].sort((x, y) => Number(x.t - y.t));

function plain(t: number, holder: string, lock: string, token: number): MultiLockEvent[] {
  return [
    ev(t, holder, 'acquire-invoke', { lock }),
    ev(t + 1, holder, 'acquire-ok', { lock, token, holdCount: 1 }),
    ev(t + 2, holder, 'release-invoke', { lock, holdCount: 1 }),
    ev(t + 3, holder, 'release-ok', { lock }),
  ];
}

describe('lock-history checker: every name of a multi-lock is exclusive', () => {
  it('passes multi-locks and plain locks taking overlapping names one after another', () => {
    const history = [...multi(0, 'm', ['a', 'b'], [1, 1]), ...plain(10, 'p', 'b', 2), ...multi(20, 'n', ['b', 'a'], [3, 2])];
    const result = checkHistory(expandMultiLock(history));
    expect(result.tenures).toHaveLength(5);
    expect(result.overlaps).toEqual([]);
    expect(result.inversions).toEqual([]);
  });

  it('flags a plain holder inside a multi-lock on one of its names, and names that name', () => {
    const history = byTime([...multi(0, 'm', ['a', 'b'], [1, 1], 10), ...plain(4, 'p', 'b', 2)]);
    const result = checkHistory(expandMultiLock(history));
    expect(result.overlaps.map((o) => o.lock)).toEqual(['b']);
  });

  it('flags two multi-locks sharing one name at once, and a token of one part going backwards', () => {
    const overlapping = byTime([...multi(0, 'm', ['a', 'b'], [1, 1], 10), ...multi(4, 'n', ['b', 'c'], [2, 1])]);
    expect(checkHistory(expandMultiLock(overlapping)).overlaps.map((o) => o.lock)).toEqual(['b']);
    const backwards = [...multi(0, 'm', ['a', 'b'], [5, 5]), ...multi(10, 'n', ['a', 'b'], [6, 4])];
    const result = checkHistory(expandMultiLock(backwards));
    expect(result.inversions.map((i) => [i.lock, i.kind])).toEqual([['b', 'order']]);
  });

  it('a lost part ends the holder’s belief in every part', () => {
    const history = [
      ev(0, 'm', 'acquire-invoke', { locks: ['a', 'b'] }),
      ev(1, 'm', 'acquire-ok', { locks: ['a', 'b'], tokens: [1, 1], holdCount: 1 }),
      ev(2, 'm', 'lost', { locks: ['a', 'b'], reason: 'deleted' }),
      ...plain(3, 'p', 'a', 2),
      ev(4, 'm', 'counter-write', { locks: ['a', 'b'], resource: 'R' }),
    ];
    const result = checkHistory(expandMultiLock(history));
    expect(result.overlaps).toEqual([]);
    expect(result.actsAfterLost).toHaveLength(2);
  });
});
