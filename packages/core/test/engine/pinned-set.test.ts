import { PinnedSet } from '@holdfast/core/workspace';
import { describe, expect, it } from 'vitest';

describe('PinnedSet', () => {
  it('behaves as a Set of its members: size, membership, insertion order, clear', () => {
    const [a, b, c] = [{ n: 'a' }, { n: 'b' }, { n: 'c' }];
    const set = new PinnedSet<{ n: string }>();
    expect(set.size).toBe(0);
    expect([...set]).toEqual([]);
    set.add(a);
    set.add(b);
    set.add(a);
    expect(set.size).toBe(2);
    expect(set.has(a)).toBe(true);
    expect(set.has(c)).toBe(false);
    expect(set.delete(a)).toBe(true);
    expect(set.delete(a)).toBe(false);
    set.add(c);
    expect([...set]).toEqual([b, c]);
    set.clear();
    expect(set.size).toBe(0);
    expect([...set]).toEqual([]);
    // Emptied and cleared, it goes on as before.
    set.add(c);
    expect([...set]).toEqual([c]);
  });

  it('while iterating, visits a member added and skips one deleted before its turn, as a Set does', () => {
    const members = [1, 2, 3, 4].map((n) => ({ n }));
    const set = new PinnedSet<{ n: number }>();
    for (const m of members) set.add(m);
    const added = { n: 5 };
    const visited: number[] = [];
    for (const m of set) {
      visited.push(m.n);
      set.delete(m);
      if (m.n === 1) set.delete(members[2]!);
      if (m.n === 2) set.add(added);
    }
    expect(visited).toEqual([1, 2, 4, 5]);
    expect(set.size).toBe(0);
  });
});
