import { LockClient, type Leader } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from './cluster-suite.js';

/** Elections on a real 3-primary / 3-replica Redis Cluster. */
describe('election on Redis Cluster', () => {
  const cluster = useRedisCluster();

  it('elections over every slot range elect, hand over by sharded pub/sub, renew by the watchdog, and are observed', async () => {
    const a = new LockClient(cluster.client(), { prefix: 'ce' });
    const b = new LockClient(cluster.client(), { prefix: 'ce' });
    const errors: unknown[] = [];
    a.on('error', (e) => errors.push(e));
    b.on('error', (e) => errors.push(e));
    const dog = new Watchdog(a, { timeoutMs: 900 });
    const admin = cluster.client();
    try {
      const names = Array.from({ length: 20 }, (_, i) => `leader:${i}`);
      expect(new Set(names.map((n) => a.election(n).keys.slot)).size).toBeGreaterThan(10);
      for (const name of names) {
        const term = await a.election(name, { termMs: 30_000 }).campaign({ value: `a:${name}` });
        expect(await b.election(name).leader()).toEqual({ value: `a:${name}`, epoch: term.epoch });
        // With a 30 s term, only the hand-off message can elect the candidate in time.
        const next = b.election(name, { termMs: 30_000 }).campaign({ value: `b:${name}`, waitMs: 10_000 });
        await waitFor(async () => (await admin.llen(a.election(name).keys.queue)) === 1);
        await term.resign();
        const second = await next;
        expect(second.epoch).toBeGreaterThan(term.epoch);
        await second.resign();
      }

      // Observed from another client across a watchdog-renewed term and its resignation.
      const seen: (Leader | null)[] = [];
      const controller = new AbortController();
      const observing = (async () => {
        for await (const leader of b.election('{watched}').observe({ signal: controller.signal })) seen.push(leader);
      })();
      await waitFor(() => seen.length === 1);
      const term = await a.election('{watched}').campaign({ value: 'w' });
      await new Promise((r) => setTimeout(r, 1_500));
      expect(term.isLeader).toBe(true);
      await term.resign();
      await waitFor(() => seen.length === 3);
      controller.abort();
      await observing;
      expect(seen).toEqual([null, { value: 'w', epoch: term.epoch }, null]);
      expect(errors).toEqual([]);
    } finally {
      await dog.stop();
      await a.close();
      await b.close();
    }
  });
});
