import { LockClient } from '@holdfast/core';
import { startRedisCluster, waitFor, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Idempotency keys and flights on a real 3-primary Redis Cluster: keys over every primary, waiters woken over sharded pub/sub. */
describe('idempotency and single-flight on Redis Cluster', () => {
  let cluster: RedisClusterFixture;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('runs fn once per request key on every primary; concurrent duplicates of another client are woken with its result', async () => {
    const clients = [new LockClient(cluster.client(), { prefix: 'idem' }), new LockClient(cluster.client(), { prefix: 'idem' })];
    const errors: unknown[] = [];
    for (const c of clients) c.on('error', (e) => errors.push(e));
    // 64 request keys: their tags spread them over the whole slot range, so over the three primaries.
    const keys = Array.from({ length: 64 }, (_, i) => `order:${i}`);
    const runs = new Map<string, number>();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const first = keys.map((key) =>
      clients[0]!.idempotency('pay').run(key, async ({ token }) => {
        runs.set(key, (runs.get(key) ?? 0) + 1);
        await gate;
        return { key, token };
      }),
    );
    // Every key is claimed (running) before the duplicates come.
    for (const key of keys) await waitFor(async () => (await clients[1]!.idempotency('pay').get(key))?.state === 'running');
    const duplicates = keys.map((key) => clients[1]!.idempotency('pay').run(key, () => ({ key, token: -1 })));
    open();
    const [ran, replayed] = [await Promise.all(first), await Promise.all(duplicates)];
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.size).toBe(keys.length);
    expect(replayed.map((r) => [r.value, r.replayed])).toEqual(ran.map((r) => [r.value, true]));
    const flights = await Promise.all(keys.flatMap((key) => clients.map((c) => c.singleFlight(`flight:${key}`, () => key))));
    expect(flights).toEqual(keys.flatMap((key) => [key, key]));
    expect(errors).toEqual([]);
    for (const c of clients) await c.close();
  }, 60_000);
});
