import { LockClient, type Lease } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from './cluster-suite.js';

/** The read-write lock on a real 3-primary / 3-replica Redis Cluster. */
describe('read-write lock on Redis Cluster', () => {
  const cluster = useRedisCluster();

  it('shares, excludes, downgrades and hands over by message on names over every slot range', async () => {
    const a = new LockClient(cluster.client(), { prefix: 'rwc' });
    const b = new LockClient(cluster.client(), { prefix: 'rwc' });
    const probe = cluster.client();
    const errors: unknown[] = [];
    a.on('error', (e) => errors.push(e));
    b.on('error', (e) => errors.push(e));
    const names = [...Array.from({ length: 30 }, (_, i) => `doc:${i}`), '{user:1}:a', 'a{b}c'];
    expect(new Set(names.map((n) => a.readWriteLock(n).read.keys.slot)).size).toBeGreaterThan(20);
    for (const name of names) {
      const docA = a.readWriteLock(name);
      const docB = b.readWriteLock(name);
      // 60 s leases and 10 s waits: only the release messages can wake the waiters in time.
      const r1 = await docA.read.acquire({ leaseMs: 60_000 });
      const r2 = await docB.read.acquire({ leaseMs: 60_000 });
      const writer = docB.write.acquire({ waitMs: 10_000, leaseMs: 60_000 });
      await waitFor(async () => (await probe.llen(docA.read.keys.queue)) === 1);
      // A reader arriving after the queued writer is held back.
      expect(await docA.read.tryAcquire()).toBeNull();
      await r1.release();
      await r2.release();
      const w = await writer;
      expect(w.token).toBeGreaterThan(r1.token);
      const readers = [docA.read.acquire({ waitMs: 10_000 }), docA.read.acquire({ waitMs: 10_000 })];
      await new Promise((r) => setTimeout(r, 20));
      await w.release();
      const held: Lease[] = await Promise.all(readers);
      for (const lease of held) expect(lease.token).toBeGreaterThanOrEqual(w.token);
      for (const lease of held) await lease.release();
      await docA.write.withLock(async (write) => {
        const read = await docA.read.acquire();
        expect(read.token).toBeGreaterThanOrEqual(write.token);
        await read.release();
      });
      expect(await docA.read.isLocked()).toBe(false);
      expect(await docA.write.isLocked()).toBe(false);
    }
    expect(errors).toEqual([]);
    probe.disconnect();
    await a.close();
    await b.close();
  }, 120_000);

  it('renews read and write holds across shards with the watchdog, no CROSSSLOT error', async () => {
    const locks = new LockClient(cluster.client(), { prefix: 'rwcw' });
    const errors: unknown[] = [];
    locks.on('error', (e) => errors.push(e));
    const dog = new Watchdog(locks, { timeoutMs: 600 });
    dog.on('error', (e) => errors.push(e));
    const leases: Lease[] = [];
    for (let i = 0; i < 40; i++) {
      const doc = locks.readWriteLock(`renewed:${i}`);
      leases.push(i % 2 === 0 ? await doc.read.acquire() : await doc.write.acquire());
    }
    leases.push(await locks.lock('renewed:mutex').acquire());
    let renewed = 0;
    dog.on('renewed', (e) => (renewed += e.count));
    await waitFor(() => renewed >= leases.length * 4, { timeoutMs: 20_000 });
    for (const lease of leases) expect(lease.isHeld).toBe(true);
    for (const lease of leases) await lease.release();
    expect(errors).toEqual([]);
    await dog.stop();
    await locks.close();
  }, 60_000);
});
