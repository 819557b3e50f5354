import { BarrierBrokenError, LockClient } from '@holdfast/core';
import { startRedisCluster, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Count-down latches and barriers on a real 3-primary / 3-replica Redis Cluster. */
describe('latch and barrier on Redis Cluster', () => {
  let cluster: RedisClusterFixture;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const clients: LockClient[] = [];
  const client = () => {
    const c = new LockClient(cluster.client(), { prefix: 'cl' });
    clients.push(c);
    return c;
  };
  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    process.off('unhandledRejection', onUnhandled);
    await cluster?.stop();
    expect(unhandled).toEqual([]);
  });

  const names = [...Array.from({ length: 24 }, (_, i) => `stage:${i}`), '{user:1}:a', 'a{b}c'];

  it('latches over every slot range: each one script in its slot, waiters woken over sharded pub/sub', async () => {
    const a = client();
    const b = client();
    expect(new Set(names.map((n) => a.countDownLatch(n).keys.slot)).size).toBeGreaterThan(16);
    for (const name of names) {
      const latch = a.countDownLatch(name);
      expect(await latch.trySetCount(2)).toBe(true);
      const waiting = [b.countDownLatch(name).wait({ waitMs: 10_000 }), a.countDownLatch(name).wait({ waitMs: 10_000 })];
      expect(await b.countDownLatch(name).countDown()).toBe(1);
      expect(await latch.countDown()).toBe(0);
      await Promise.all(waiting);
      expect(await b.countDownLatch(name).count()).toBe(0);
    }
  });

  it('barriers over every slot range trip across clients, and a timed-out party breaks its generation', async () => {
    const a = client();
    const b = client();
    const c = client();
    for (const name of names) {
      const tripped = await Promise.all([a, b, c].map((x) => x.barrier(name, { parties: 3 }).arrive({ waitMs: 10_000 })));
      expect(tripped).toEqual([{ generation: 0 }, { generation: 0 }, { generation: 0 }]);
    }
    const other = a.barrier('{user:1}:broken', { parties: 3 }).arrive({ waitMs: 10_000 }).catch((error: unknown) => error);
    await expect(b.barrier('{user:1}:broken', { parties: 3 }).arrive({ waitMs: 200 })).rejects.toThrow('Timed out');
    const broken = (await other) as BarrierBrokenError;
    expect(broken).toBeInstanceOf(BarrierBrokenError);
    expect(broken.reason).toBe('timeout');
  });
});
