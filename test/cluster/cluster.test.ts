import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { startRedisCluster, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** holdfast on a real 3-primary / 3-replica Redis Cluster (one shared cluster: it takes seconds to form). */
describe('Redis Cluster', () => {
  let cluster: RedisClusterFixture;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await cluster?.stop();
    expect(unhandled).toEqual([]);
  });

  it('locks with names over every slot range, braces included, acquire, re-enter, wait and release', async () => {
    const a = new LockClient(cluster.client(), { prefix: 'cl' });
    const b = new LockClient(cluster.client(), { prefix: 'cl' });
    const errors: unknown[] = [];
    a.on('error', (e) => errors.push(e));
    b.on('error', (e) => errors.push(e));
    const names = [...Array.from({ length: 60 }, (_, i) => `job:${i}`), '{user:1}:a', '{user:1}:b', 'a{b}c', '}{'];
    const slots = new Set(names.map((n) => a.lock(n).keys.slot));
    expect(slots.size).toBeGreaterThan(40);
    for (const name of names) {
      await a.lock(name).withLock(async (lease) => {
        const inner = await a.lock(name).acquire();
        expect(inner.token).toBe(lease.token);
        expect(await b.lock(name).tryAcquire()).toBeNull();
        await inner.release();
      });
    }
    // A waiter on another client is handed the lock over pub/sub.
    const held = await a.lock('handoff').acquire({ leaseMs: 20_000 });
    const waiting = b.lock('handoff').acquire({ waitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    const releasedAt = performance.now();
    await held.release();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(5_000);
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
    expect(errors).toEqual([]);
    await a.close();
    await b.close();
  }, 60_000);

  it('renews 1000 held leases across shards with no CROSSSLOT error', async () => {
    const redis = cluster.client();
    const locks = new LockClient(redis, { prefix: 'clw' });
    const dog = new Watchdog(locks, { timeoutMs: 1_500 });
    const failures: unknown[] = [];
    dog.on('renewalFailed', (e) => failures.push(e.error));
    const lost: unknown[] = [];
    locks.on('lost', (e) => lost.push(e));
    const leases = await Promise.all(Array.from({ length: 1000 }, (_, i) => locks.lock(`renew:${i}`).acquire()));
    await new Promise((r) => setTimeout(r, 3_500)); // past two leases: only renewal keeps them
    expect(failures).toEqual([]);
    expect(lost).toEqual([]);
    expect(leases.every((l) => l.isHeld)).toBe(true);
    const probe = new LockClient(cluster.client(), { prefix: 'clw' });
    expect(await probe.lock('renew:999').isLocked()).toBe(true);
    await Promise.all(leases.map((l) => l.release()));
    expect(await probe.lock('renew:999').isLocked()).toBe(false);
    await dog.stop();
    await locks.close();
    await probe.close();
  }, 60_000);
});
