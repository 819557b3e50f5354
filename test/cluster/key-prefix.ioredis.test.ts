import { LockClient } from '@holdfast/core';
import { startRedisCluster, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * ioredis's `keyPrefix` on a Cluster client (node-redis has no such option: IOREDIS_ONLY in
 * vitest.config.ts). One cluster of its own: it takes seconds to form.
 */
describe('Redis Cluster, ioredis keyPrefix', () => {
  let cluster: RedisClusterFixture;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('clients with an ioredis keyPrefix (braces included) are woken by the release message, not the lease end', async () => {
    for (const keyPrefix of ['app:', '{tenant}:']) {
      const a = new LockClient(cluster.client({ keyPrefix }), { prefix: 'kp' });
      const b = new LockClient(cluster.client({ keyPrefix }), { prefix: 'kp' });
      const errors: unknown[] = [];
      a.on('error', (e) => errors.push(e));
      b.on('error', (e) => errors.push(e));
      for (let i = 0; i < 5; i++) {
        // 60 s leases and 10 s waits: only the release message can wake the waiter in time.
        const held = await a.lock(`kp:${i}`).acquire({ leaseMs: 60_000 });
        const waiting = b.lock(`kp:${i}`).acquire({ waitMs: 10_000 });
        await new Promise((r) => setTimeout(r, 20));
        await held.release();
        const next = await waiting;
        expect(next.token).toBeGreaterThan(held.token);
        await next.release();
      }
      // The keys live under the keyPrefix, where ioredis put them.
      const probe = cluster.client();
      const lease = await a.lock('kp:where').acquire();
      expect(await probe.exists(`${keyPrefix}${a.lock('kp:where').keys.lock}`)).toBe(1);
      await lease.release();
      probe.disconnect();
      expect(errors).toEqual([]);
      await a.close();
      await b.close();
    }
  }, 60_000);
});
