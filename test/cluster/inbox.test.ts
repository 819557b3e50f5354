import { LockClient } from '@holdfast/core';
import { inboxKeys } from '@holdfast/core/keys';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from './cluster-suite.js';

/** The per-key inbox on a real 3-primary / 3-replica Redis Cluster. */
describe('inbox on Redis Cluster', () => {
  const cluster = useRedisCluster();

  it('keys over every node: one turn at a time per key, in post order, nothing left; recover() finds keys in every slot', async () => {
    const handled = new Map<string, number[]>();
    const running = new Set<string>();
    let overlaps = 0;
    const errors: unknown[] = [];
    const processor = (name: string) => {
      const locks = new LockClient(cluster.client(), { prefix: 'ci' });
      locks.on('error', (e) => errors.push(e));
      const inbox = locks.inbox<{ n: number }>('threads', {
        handler: async (key, messages) => {
          if (running.has(key)) overlaps++;
          running.add(key);
          await new Promise((r) => setTimeout(r, 1));
          running.delete(key);
          for (const m of messages) handled.set(key, [...(handled.get(key) ?? []), m.n]);
        },
      });
      inbox.on('dead', (e) => errors.push({ name, dead: e }));
      return { locks, inbox };
    };
    const a = processor('a');
    const b = processor('b');
    const keys = Array.from({ length: 30 }, (_, i) => `conversation:${i}`);
    // The keys spread over the three primaries (slots of the (name, key) pair's tag).
    const slots = new Set(keys.map((key) => inboxKeys('ci', 'threads', key).slot));
    expect(slots.size).toBeGreaterThan(15);
    // Each key's messages posted one after another, alternately through both clients; keys at once.
    await Promise.all(
      keys.map(async (key) => {
        for (let n = 1; n <= 6; n++) await (n % 2 ? a : b).inbox.post(key, { n });
      }),
    );
    for (const key of keys) await a.inbox.drain(key, { waitMs: 20_000 });
    expect(overlaps).toBe(0);
    for (const key of keys) expect(handled.get(key)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await a.inbox.keys()).toEqual([]);
    expect(await b.inbox.pending(keys[0]!)).toBe(0);

    // A post-only inbox stores messages nobody handles; recover() on a handling inbox finds
    // them in every slot's index and handles them.
    const poster = new LockClient(cluster.client(), { prefix: 'ci' });
    const postOnly = poster.inbox<{ n: number }>('threads');
    const late = keys.slice(0, 12).map((key) => `late:${key}`);
    for (const key of late) await postOnly.post(key, { n: 7 });
    expect((await a.inbox.keys()).sort()).toEqual([...late].sort());
    expect(await a.inbox.recover()).toBe(late.length);
    for (const key of late) await a.inbox.drain(key, { waitMs: 20_000 });
    for (const key of late) expect(handled.get(key)).toEqual([7]);
    expect(await b.inbox.keys()).toEqual([]);
    expect(errors).toEqual([]);
    await poster.close();
    await a.locks.close();
    await b.locks.close();
  }, 60_000);
});
