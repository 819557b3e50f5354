import { describe, expect, it } from 'vitest';
import { Changes, globMatcher, type Holder, type LockState } from '../src/index.js';

const holder = (owner: string, remainingMs: number): Holder => ({ owner, client: owner, holds: 1, token: 1, remainingMs, handoffUnconfirmed: false });
const lock = (name: string, ...holders: Holder[]): LockState => ({ name, kind: 'lock', key: name, foreign: false, holders, waiters: [] });

describe('watch: lost leases between refreshes', () => {
  it('counts a holder gone after its lease ran out as lost, one released in time not', () => {
    const changes = new Changes();
    expect(changes.update([lock('a', holder('o1', 5_000)), lock('b', holder('o2', 200))], 0)).toEqual({ lost: 0 });
    // 1 s later: a passed from o1 to o3 (released within its lease), b's holder ran out and left.
    expect(changes.update([lock('a', holder('o3', 5_000))], 1_000)).toEqual({ lost: 1 });
    // A holder released in time is no loss.
    expect(changes.update([lock('a'), lock('c', holder('o4', 5_000))], 2_000)).toEqual({ lost: 0 });
    expect(changes.lost).toBe(1);
  });

  it('matches names with a glob', () => {
    const match = globMatcher('job:*:?');
    expect(['job:1:a', 'job:x.y:b', 'job:1:ab', 'jobs:1:a'].map(match)).toEqual([true, true, false, false]);
    expect(globMatcher(undefined)('anything')).toBe(true);
  });
});
