import { LockClient } from '@holdfast/core';
import { startRedisCluster, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** runOnce and the run coordinator on a real 3-primary Redis Cluster: keys over every primary, renewals routed to each. */
describe('runOnce on Redis Cluster', () => {
  let cluster: RedisClusterFixture;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('claims keys on every primary once, renews them there, and skips them everywhere else', async () => {
    const clients = [new LockClient(cluster.client(), { prefix: 'once' }), new LockClient(cluster.client(), { prefix: 'once' })];
    const errors: unknown[] = [];
    const lost: unknown[] = [];
    for (const c of clients) c.on('error', (e) => errors.push(e)).on('lost', (e) => lost.push(e));
    // 64 keys: their tags spread them over the whole slot range, so over the three primaries.
    const keys = Array.from({ length: 64 }, (_, i) => `job:${i}`);
    const runs = new Map<string, number>();
    const outcomes = await Promise.all(
      keys.flatMap((key) =>
        clients.map((c) =>
          c.runOnce(key, async () => {
            runs.set(key, (runs.get(key) ?? 0) + 1);
            // Past the ttl: renewals (every 500 ms) on the key's primary keep the claim.
            await new Promise((resolve) => setTimeout(resolve, 1_800));
            return key;
          }, { ttlMs: 1_500 }),
        ),
      ),
    );
    expect(outcomes.filter((o) => o.ran)).toHaveLength(keys.length);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.size).toBe(keys.length);
    // Renewed past the ttl: no claim was lost while its job ran, and every key is still claimed.
    const coordinator = clients[1]!.runCoordinator();
    expect(await Promise.all(keys.map((key) => coordinator.shouldRun(key, 1_500)))).toEqual(keys.map(() => false));
    expect(lost).toEqual([]);
    expect(errors).toEqual([]);
    for (const c of clients) await c.close();
  }, 60_000);
});
