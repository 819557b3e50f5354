import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from './cluster-suite.js';

/** Semaphores on a real 3-primary / 3-replica Redis Cluster. */
describe('semaphore on Redis Cluster', () => {
  const cluster = useRedisCluster();

  it('semaphores over every slot range count, queue and hand off over sharded pub/sub', async () => {
    const a = new LockClient(cluster.client(), { prefix: 'cs' });
    const b = new LockClient(cluster.client(), { prefix: 'cs' });
    const errors: unknown[] = [];
    a.on('error', (e) => errors.push(e));
    b.on('error', (e) => errors.push(e));
    const names = [...Array.from({ length: 30 }, (_, i) => `pool:${i}`), '{user:1}:a', 'a{b}c'];
    expect(new Set(names.map((n) => a.semaphore(n, { permits: 2 }).keys.slot)).size).toBeGreaterThan(20);
    for (const name of names) {
      const sem = a.semaphore(name, { permits: 2 });
      const first = await sem.acquire({ permits: 2 });
      expect(await b.semaphore(name, { permits: 2 }).tryAcquire()).toBeNull();
      expect(await sem.availablePermits()).toBe(0);
      await first.release();
      expect(await b.semaphore(name, { permits: 2 }).availablePermits()).toBe(2);
    }
    // With 30 s leases, only the release message can wake the waiters in time.
    for (let i = 0; i < 10; i++) {
      const held = await a.semaphore('handoff', { permits: 2 }).acquire({ permits: 2, leaseMs: 30_000 });
      const waiting = [1, 2].map(() => b.semaphore('handoff', { permits: 2 }).acquire({ waitMs: 10_000 }));
      await new Promise((r) => setTimeout(r, 20));
      await held.release();
      const next = await Promise.all(waiting);
      expect(next.every((lease) => lease.token > held.token)).toBe(true);
      await Promise.all(next.map((lease) => lease.release()));
    }
    // forceRelease: one script in the semaphore's slot; a waiter on another client is woken by its message.
    const stuck = await a.semaphore('{user:1}:forced', { permits: 1 }).acquire({ leaseMs: 30_000 });
    const woken = b.semaphore('{user:1}:forced', { permits: 1 }).acquire({ waitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 20));
    expect(await b.semaphore('{user:1}:forced', { permits: 1 }).forceRelease()).toBe(true);
    expect((await woken).token).toBeGreaterThan(stuck.token);
    expect(errors).toEqual([]);
    await a.close();
    await b.close();
  }, 60_000);

  it('the watchdog renews semaphore and lock leases on every node together', async () => {
    const locks = new LockClient(cluster.client(), { prefix: 'cw' });
    const dog = new Watchdog(locks, { timeoutMs: 800 });
    const problems: unknown[] = [];
    dog.on('renewalFailed', (e) => problems.push(e));
    dog.on('lost', (e) => problems.push(e));
    locks.on('error', (e) => problems.push(e));
    const permits = await Promise.all(Array.from({ length: 40 }, (_, i) => locks.semaphore(`w:${i}`, { permits: 1 }).acquire()));
    const held = await Promise.all(Array.from({ length: 40 }, (_, i) => locks.lock(`w:${i}`).acquire()));
    await new Promise((r) => setTimeout(r, 4 * 800));
    expect(problems).toEqual([]);
    expect([...permits, ...held].every((lease) => lease.isHeld)).toBe(true);
    const rival = new LockClient(cluster.client(), { prefix: 'cw' });
    for (let i = 0; i < 40; i += 7) expect(await rival.semaphore(`w:${i}`, { permits: 1 }).availablePermits()).toBe(0);
    await Promise.all([...permits, ...held].map((lease) => lease.release()));
    await rival.close();
    await dog.stop();
    await locks.close();
  }, 60_000);
});
