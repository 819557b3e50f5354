import { describe, expect, it } from 'vitest';
import { checkCounter, checkHistory, mergeHistories, parseLines, toLine, type EventType, type HistoryEvent } from '@holdfast/test-utils/models';

/** A history written by hand: `t` in arbitrary units, one lock `L`, resource `R`. */
function ev(t: number, holder: string, type: EventType, fields: Partial<HistoryEvent> = {}): HistoryEvent {
  const resource = type.startsWith('write') || type.startsWith('counter') ? 'R' : undefined;
  return { t: BigInt(t), holder, lock: 'L', type, ...(resource ? { resource } : {}), ...fields };
}

/** A clean critical section: acquire, one fenced write, release. */
function section(t: number, holder: string, token: number): HistoryEvent[] {
  return [
    ev(t, holder, 'acquire-invoke'),
    ev(t + 1, holder, 'acquire-ok', { token, holdCount: 1 }),
    ev(t + 2, holder, 'write-invoke', { token }),
    ev(t + 3, holder, 'write-ok', { accepted: true }),
    ev(t + 4, holder, 'release-invoke', { holdCount: 1 }),
    ev(t + 5, holder, 'release-ok'),
  ];
}

describe('lock-history checker', () => {
  it('passes a clean sequential history, including re-entries with the same token', () => {
    const history = mergeHistories(section(0, 'a', 1), section(10, 'b', 2), [
      ev(20, 'a', 'acquire-invoke'),
      ev(21, 'a', 'acquire-ok', { token: 3, holdCount: 1 }),
      ev(22, 'a', 'acquire-ok', { token: 3, holdCount: 2 }),
      ev(23, 'a', 'release-invoke', { holdCount: 2 }),
      ev(24, 'a', 'release-ok'),
      ev(25, 'a', 'release-invoke', { holdCount: 1 }),
      ev(26, 'a', 'release-ok'),
    ], section(27, 'b', 4));
    const result = checkHistory(history);
    expect(result.tenures).toHaveLength(4);
    expect(result.overlaps).toEqual([]);
    expect(result.inversions).toEqual([]);
    expect(result.staleWrites).toEqual([]);
    expect(result.writesAccepted).toBe(3);
  });

  it('flags two holders acting on the lock at the same time', () => {
    const history = mergeHistories(section(0, 'a', 1), section(1, 'b', 2));
    const result = checkHistory(history);
    expect(result.overlaps).toHaveLength(1);
    expect(result.overlaps[0]!.earlier.holder).toBe('a');
    expect(result.overlaps[0]!.later.holder).toBe('b');
  });

  it('counts every tenure of another holder that a long tenure overlaps', () => {
    const hidden = [
      ev(0, 'b', 'acquire-invoke'),
      ev(1, 'b', 'acquire-ok', { token: 1, holdCount: 1 }),
      ev(2, 'a', 'acquire-invoke'),
      ev(3, 'a', 'acquire-ok', { token: 2, holdCount: 1 }),
      ev(4, 'a', 'release-invoke', { holdCount: 1 }),
      ev(5, 'a', 'acquire-invoke'),
      ev(6, 'a', 'acquire-ok', { token: 3, holdCount: 1 }),
      ev(30, 'a', 'release-invoke', { holdCount: 1 }),
      ev(31, 'a', 'acquire-invoke'),
      ev(32, 'a', 'acquire-ok', { token: 4, holdCount: 1 }),
      ev(33, 'a', 'release-invoke', { holdCount: 1 }),
      ev(40, 'b', 'release-invoke', { holdCount: 1 }),
    ];
    // b (1..40) overlaps all three tenures of a.
    expect(checkHistory(hidden).overlaps).toHaveLength(3);
  });

  it('allows the next holder once the earlier one was told lost, and counts what it does afterwards', () => {
    const history = [
      ev(0, 'a', 'acquire-invoke'),
      ev(1, 'a', 'acquire-ok', { token: 1, holdCount: 1 }),
      ev(5, 'a', 'lost', { reason: 'expired' }),
      ev(6, 'b', 'acquire-invoke'),
      ev(7, 'b', 'acquire-ok', { token: 2, holdCount: 1 }),
      ev(8, 'b', 'write-invoke', { token: 2 }),
      ev(9, 'b', 'write-ok', { accepted: true }),
      ev(10, 'a', 'write-invoke', { token: 1 }),
      ev(11, 'a', 'write-ok', { accepted: false }),
      ev(12, 'b', 'release-invoke', { holdCount: 1 }),
    ];
    const result = checkHistory(history);
    expect(result.overlaps).toEqual([]);
    expect(result.actsAfterLost).toHaveLength(1);
    expect(result.acceptedAfterLost).toBe(0);
    expect(result.writesRejected).toBe(1);
  });

  it('flags an earlier holder that acts after its successor acquired and is told lost only later', () => {
    // The frozen-process case: nothing between ok and the late write, then `lost`.
    const history = [
      ev(0, 'a', 'acquire-invoke'),
      ev(1, 'a', 'acquire-ok', { token: 1, holdCount: 1 }),
      ev(6, 'b', 'acquire-invoke'),
      ev(7, 'b', 'acquire-ok', { token: 2, holdCount: 1 }),
      ev(10, 'a', 'write-invoke', { token: 1 }),
      ev(11, 'a', 'write-ok', { accepted: true }),
      ev(12, 'a', 'lost', { reason: 'expired' }),
    ];
    expect(checkHistory(history).overlaps).toHaveLength(1);
  });

  it('does not count a frozen holder that was told lost before it acted again', () => {
    const history = [
      ev(0, 'a', 'acquire-invoke'),
      ev(1, 'a', 'acquire-ok', { token: 1, holdCount: 1 }),
      ev(6, 'b', 'acquire-invoke'),
      ev(7, 'b', 'acquire-ok', { token: 2, holdCount: 1 }),
      ev(10, 'a', 'lost', { reason: 'expired' }),
      ev(11, 'b', 'release-invoke', { holdCount: 1 }),
    ];
    expect(checkHistory(history).overlaps).toEqual([]);
  });

  it('flags a token lower than one handed out before the acquisition was invoked', () => {
    const history = mergeHistories(section(0, 'a', 5), section(10, 'b', 3));
    const result = checkHistory(history);
    expect(result.inversions).toHaveLength(1);
    expect(result.inversions[0]).toMatchObject({ kind: 'order', earlier: { token: 5 }, later: { token: 3 } });
  });

  it('flags the same token handed to two acquisitions, and a re-entry with another token', () => {
    expect(checkHistory(mergeHistories(section(0, 'a', 4), section(10, 'b', 4))).inversions).toMatchObject([
      { kind: 'duplicate' },
    ]);
    const reentry = [
      ev(0, 'a', 'acquire-invoke'),
      ev(1, 'a', 'acquire-ok', { token: 4, holdCount: 1 }),
      ev(2, 'a', 'acquire-ok', { token: 5, holdCount: 2 }),
    ];
    expect(checkHistory(reentry).inversions).toMatchObject([{ kind: 'reentry' }]);
  });

  it('does not order acquisitions that ran concurrently', () => {
    // b was invoked before a completed: either token order is linearizable.
    const history = [
      ev(0, 'a', 'acquire-invoke'),
      ev(1, 'b', 'acquire-invoke'),
      ev(2, 'a', 'acquire-ok', { token: 7, holdCount: 1 }),
      ev(3, 'a', 'release-invoke', { holdCount: 1 }),
      ev(4, 'b', 'acquire-ok', { token: 6, holdCount: 1 }),
      ev(5, 'b', 'release-invoke', { holdCount: 1 }),
    ];
    expect(checkHistory(history).inversions).toEqual([]);
  });

  it('flags a stale write that the resource accepted', () => {
    const history = [
      ...section(0, 'b', 6),
      ev(10, 'a', 'write-invoke', { token: 5 }),
      ev(11, 'a', 'write-ok', { accepted: true }),
    ];
    const result = checkHistory(history);
    expect(result.staleWrites).toEqual([{ resource: 'R', holder: 'a', token: 5, seenToken: 6 }]);
  });

  it('does not flag a stale write the resource rejected, nor concurrent writes', () => {
    const history = [
      ev(0, 'b', 'write-invoke', { token: 6 }),
      ev(1, 'a', 'write-invoke', { token: 5 }),
      ev(2, 'b', 'write-ok', { accepted: true }),
      ev(3, 'a', 'write-ok', { accepted: true }),
      ev(4, 'c', 'write-invoke', { token: 4 }),
      ev(5, 'c', 'write-ok', { accepted: false }),
    ];
    const result = checkHistory(history);
    expect(result.staleWrites).toEqual([]);
    expect(result.writesRejected).toBe(1);
  });

  it('counts lost updates of an unguarded counter', () => {
    const history = [
      ev(0, 'a', 'counter-read', { value: 0 }),
      ev(1, 'b', 'counter-read', { value: 0 }),
      ev(2, 'a', 'counter-write', { value: 1 }),
      ev(3, 'b', 'counter-write', { value: 1 }),
    ];
    expect(checkCounter(history, 1)).toEqual({ increments: 2, final: 1, lostUpdates: 1 });
    expect(checkCounter(history.slice(0, 1).concat(history[2]!), 1).lostUpdates).toBe(0);
  });

  it('round-trips events through JSON lines with exact nanosecond times', () => {
    const event = ev(0, 'p1w0', 'acquire-ok', { token: 9, holdCount: 1 });
    event.t = 123_456_789_012_345_678n;
    expect(parseLines(`${toLine(event)}\n\n`)).toEqual([event]);
    expect(() => parseLines('{"x":1}')).toThrow(/not a history event/);
  });
});
