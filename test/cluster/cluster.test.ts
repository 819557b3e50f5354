import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { probeForSecondHolders, waitForRole } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from './cluster-suite.js';

/** holdfast on a real 3-primary / 3-replica Redis Cluster (one shared cluster: it takes seconds to form). */
describe('Redis Cluster', () => {
  const cluster = useRedisCluster();
  const serverAt = (address: string) => cluster.servers.find((srv) => `${srv.host}:${srv.port}` === address)!;

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
    // A waiter on another client is handed the lock over sharded pub/sub, every time:
    // with 20 s leases, one missed message would cost seconds.
    const gaps: number[] = [];
    for (let i = 0; i < 20; i++) {
      const held = await a.lock('handoff').acquire({ leaseMs: 20_000 });
      const waiting = b.lock('handoff').acquire({ waitMs: 10_000 });
      await new Promise((r) => setTimeout(r, 20));
      const releasedAt = performance.now();
      await held.release();
      const next = await waiting;
      gaps.push(performance.now() - releasedAt);
      expect(next.token).toBeGreaterThan(held.token);
      await next.release();
    }
    expect(Math.max(...gaps)).toBeLessThan(2_000);
    expect(errors).toEqual([]);
    await a.close();
    await b.close();
  }, 60_000);

  it('a fresh Cluster client checks every primary for eviction before its first acquisition', async () => {
    const admins = cluster.servers.map((srv) => srv.client());
    try {
      for (const admin of admins) {
        await admin.config('SET', 'maxmemory', '500mb');
        await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
      }
      const locks = new LockClient(cluster.client(), { prefix: 'clev' });
      await expect(locks.lock('first').tryAcquire()).rejects.toThrow('maxmemory-policy volatile-lru');
      await locks.close();
    } finally {
      for (const admin of admins) {
        await admin.config('SET', 'maxmemory', '0');
        await admin.config('SET', 'maxmemory-policy', 'noeviction');
        admin.disconnect();
      }
    }
  }, 60_000);

  it('renews 1000 held leases across shards with no CROSSSLOT error', async () => {
    const redis = cluster.client();
    const locks = new LockClient(redis, { prefix: 'clw' });
    const dog = new Watchdog(locks, { timeoutMs: 1_500 });
    const failures: unknown[] = [];
    dog.on('renewalFailed', (e) => failures.push(e.error));
    const ticks: number[] = [];
    dog.on('renewed', (e) => ticks.push(e.count));
    // Renewals go out as one pipeline per primary per tick, not one call per slot.
    let pipelines = 0;
    const pipeline = redis.pipeline.bind(redis);
    redis.pipeline = ((...args: Parameters<typeof redis.pipeline>) => {
      pipelines++;
      return pipeline(...args);
    }) as typeof redis.pipeline;
    const lost: unknown[] = [];
    locks.on('lost', (e) => lost.push(e));
    const leases = await Promise.all(Array.from({ length: 1000 }, (_, i) => locks.lock(`renew:${i}`).acquire()));
    await new Promise((r) => setTimeout(r, 3_500)); // past two leases: only renewal keeps them
    expect(failures).toEqual([]);
    expect(lost).toEqual([]);
    expect(leases.every((l) => l.isHeld)).toBe(true);
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks.every((count) => count === 1000)).toBe(true);
    // (one more tick may be out when this is read)
    expect(pipelines).toBeLessThanOrEqual(3 * (ticks.length + 1));
    const probe = new LockClient(cluster.client(), { prefix: 'clw' });
    expect(await probe.lock('renew:999').isLocked()).toBe(true);
    await Promise.all(leases.map((l) => l.release()));
    expect(await probe.lock('renew:999').isLocked()).toBe(false);
    await dog.stop();
    await locks.close();
    await probe.close();
  }, 60_000);

  it('survives a live migration of a held lock\'s slot (ASK, TRYAGAIN, MOVED) with renewal and a waiter', async () => {
    const locks = new LockClient(cluster.client(), { prefix: 'clm' });
    const other = new LockClient(cluster.client(), { prefix: 'clm' });
    // Renewed every 2 s: a waiter that missed the release message would sleep 4 s or more.
    const dog = new Watchdog(locks, { timeoutMs: 6_000 });
    const errors: unknown[] = [];
    locks.on('error', (e) => errors.push(e));
    other.on('error', (e) => errors.push(e));
    const lost: unknown[] = [];
    locks.on('lost', (e) => lost.push(e));
    const lock = locks.lock('migrating');
    const lease = await lock.acquire();
    const waiting = other.lock('migrating').acquire({ waitMs: 30_000 });

    const slot = lock.keys.slot;
    const nodes = await clusterNodes(cluster.servers[0]!.client());
    const source = nodes.find((n) => n.primary && n.ranges.some((r) => inRange(r, slot)))!;
    const target = nodes.find((n) => n.primary && n.id !== source.id)!;
    const src = serverAt(source.address).client();
    const dst = serverAt(target.address).client();
    await dst.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
    await src.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
    // Keys move one at a time, renewals and the waiter running in between:
    // a script finding some of its keys gone gets ASK or TRYAGAIN.
    const [host, port] = target.address.split(':');
    for (;;) {
      const keys = (await src.call('CLUSTER', 'GETKEYSINSLOT', slot, 1)) as string[];
      if (keys.length === 0) break;
      await src.call('MIGRATE', host!, port!, '', 0, 5_000, 'KEYS', keys[0]!);
      await new Promise((r) => setTimeout(r, 600));
    }
    for (const node of nodes.filter((n) => n.primary)) {
      const c = serverAt(node.address).client();
      await c.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
      c.disconnect();
    }
    await new Promise((r) => setTimeout(r, 2_500)); // renewals now meet MOVED first

    expect(lost).toEqual([]);
    expect(lease.isHeld).toBe(true);
    expect(await other.lock('migrating').tryAcquire()).toBeNull();
    const releasedAt = performance.now();
    await lease.release();
    const next = await waiting;
    // Woken by the release message, on the slot's new node.
    expect(performance.now() - releasedAt).toBeLessThan(3_000);
    expect(next.token).toBeGreaterThan(lease.token);
    await next.release();
    expect(errors).toEqual([]);
    await dog.stop();
    await locks.close();
    await other.close();
    src.disconnect();
    dst.disconnect();
  }, 60_000);

  // Last: it changes the topology the tests above rely on.
  it('CLUSTER FAILOVER while leases are held: none is duplicated, and wake-ups follow the new primary', async () => {
    const locks = new LockClient(cluster.client(), { prefix: 'clf', commandTimeoutMs: 1_000 });
    const probe = new LockClient(cluster.client(), { prefix: 'clf', commandTimeoutMs: 1_000 });
    const dog = new Watchdog(locks, { timeoutMs: 3_000 });
    const lost = new Set<string>();
    locks.on('lost', (e) => lost.add(e.name));
    const leases = await Promise.all(Array.from({ length: 200 }, (_, i) => locks.lock(`f:${i}`).acquire()));

    // Fail over the primary that serves the first lease's slot, the way an operator does.
    const admin = cluster.servers[0]!.client();
    const slot = locks.lock('f:0').keys.slot;
    const nodes = String(await admin.call('CLUSTER', 'NODES')).trim().split('\n').map((line) => line.split(' '));
    const owner = nodes.find((n) => n[2]!.includes('master') && n.slice(8).some((range) => inRange(range, slot)))!;
    const replica = nodes.find((n) => n[3] === owner[0])!;
    const replicaServer = cluster.servers.find((srv) => replica[1]!.startsWith(`${srv.host}:${srv.port}@`))!;
    const replicaAdmin = replicaServer.client();
    await replicaAdmin.call('CLUSTER', 'FAILOVER');
    await waitForRole(replicaAdmin, 'master');

    // Two leases' worth of renewals across the switch.
    expect(await probeForSecondHolders(leases.slice(0, 40), probe, 6)).toEqual([]);
    // Every lease is still held, or its holder was told it is not.
    for (const lease of leases) expect(lease.isHeld || lost.has(lease.name)).toBe(true);
    // A coordinated failover loses no write: in practice every lease survives it.
    expect(leases.filter((l) => l.isHeld).length).toBeGreaterThan(190);

    // Release wake-ups on the failed-over shard still arrive (the sharded subscriber moved).
    const held = leases[0]!;
    expect(held.isHeld).toBe(true);
    const waiting = probe.lock(held.name).acquire({ waitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    const releasedAt = performance.now();
    await held.release();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(3_000);
    await next.release();
    await Promise.all(leases.filter((l) => l.isHeld).map((l) => l.release()));
    await dog.stop();
    await locks.close();
    await probe.close();
    admin.disconnect();
    replicaAdmin.disconnect();
  }, 90_000);
});

function inRange(range: string, slot: number): boolean {
  if (range.startsWith('[')) return false; // a slot being migrated
  const [from, to = from] = range.split('-').map(Number);
  return slot >= from! && slot <= to!;
}

interface ClusterNode {
  readonly id: string;
  readonly address: string;
  readonly primary: boolean;
  readonly primaryId: string;
  readonly ranges: readonly string[];
}

async function clusterNodes(admin: Redis): Promise<ClusterNode[]> {
  const text = String(await admin.call('CLUSTER', 'NODES'));
  admin.disconnect();
  return text.trim().split('\n').map((line) => {
    const f = line.split(' ');
    return { id: f[0]!, address: f[1]!.split('@')[0]!, primary: f[2]!.includes('master'), primaryId: f[3]!, ranges: f.slice(8) };
  });
}
