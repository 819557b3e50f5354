import { LockClient, fencedWrite, readFenced } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import { startRedisCluster, startRedisServers, uniqueName, waitFor, type RedisClusterFixture, type RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import { Cluster as ValkeyCluster, Valkey } from 'iovalkey';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * iovalkey (the ioredis fork for Valkey) under each package, against real servers. Its classes
 * are not ioredis's, so this also checks that nothing in holdfast depends on ioredis itself.
 * Hand-offs use 30 s leases and a 10 s wait: a waiter the release message never reached would
 * end with LockTimeoutError, not with the lock.
 */
const opened: { disconnect(): void }[] = [];
function valkey(url: string): Valkey {
  const client = new Valkey(url);
  client.on('error', () => undefined);
  opened.push(client);
  return client;
}

describe('iovalkey clients', () => {
  let servers: RedisServer[];
  let admin: ReturnType<RedisServer['client']>;
  beforeAll(async () => {
    servers = await startRedisServers(3);
    admin = servers[0]!.client();
  }, 60_000);
  afterAll(async () => {
    for (const client of opened.splice(0)) client.disconnect();
    await Promise.all((servers ?? []).map((server) => server.stop()));
  });

  it('LockClient: acquire, re-enter, hand-off by release message, fenced write, inspect', async () => {
    const a = new LockClient(valkey(servers[0]!.url), { prefix: 'valkey' });
    const b = new LockClient(valkey(servers[0]!.url), { prefix: 'valkey' });
    const errors: unknown[] = [];
    a.on('error', (error) => errors.push(error));
    b.on('error', (error) => errors.push(error));
    const name = uniqueName('job');

    const holdCounts = await a.lock(name).withLock(async (outer) => {
      const inner = await a.lock(name).acquire();
      await inner.release();
      return [outer.holdCount, inner.holdCount, inner.token === outer.token];
    });
    expect(holdCounts).toEqual([1, 2, true]);
    const held = await a.lock(name).acquire({ leaseMs: 30_000 });
    expect(held.token).toBeGreaterThan(0);
    expect(await b.lock(name).tryAcquire()).toBeNull();
    expect(await b.lock(name).isLocked()).toBe(true);

    const waiting = b.lock(name).acquire({ waitMs: 10_000 });
    await waitFor(async () => (await admin.pubsub('SHARDNUMSUB', b.lock(name).keys.channel))[1] === 1);
    await held.release();
    const next = await waiting;
    expect(next.token).toBeGreaterThan(held.token);

    const resource = valkey(servers[1]!.url);
    const key = uniqueName('fenced');
    expect(await fencedWrite(resource, key, next.token, 'v1')).toBe(true);
    expect(await fencedWrite(resource, key, held.token, 'stale')).toBe(false);
    expect(await readFenced(resource, key)).toEqual({ token: next.token, value: 'v1' });
    await next.release();
    expect(await a.lock(name).isLocked()).toBe(false);
    expect(errors).toEqual([]);
    await a.close();
    await b.close();
  });

  it('Watchdog: keeps a lease past twice its length', async () => {
    const locks = new LockClient(valkey(servers[0]!.url), { prefix: 'valkey' });
    const dog = new Watchdog(locks, { timeoutMs: 600 });
    const lost: unknown[] = [];
    locks.on('lost', (event) => lost.push(event));
    const lock = locks.lock(uniqueName('renewed'));
    const lease = await lock.acquire();
    let renewals = 0;
    dog.on('renewed', () => renewals++);
    // Six renewals, 200 ms apart at the least: past twice the 600 ms lease, held by renewal alone.
    await waitFor(() => renewals >= 6, { timeoutMs: 20_000 });
    expect(lease.isHeld).toBe(true);
    expect(await lock.remainingTtlMs()).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    await lease.release();
    await dog.stop();
    await locks.close();
  });

  it('Redlock: a quorum of three iovalkey clients locks, fences and hands off', async () => {
    // Instance timeouts far above the default 50 ms: this checks the client, not the machine's
    // speed (a release on a loaded machine answered after 50 ms counts as timed out).
    const options = { prefix: 'valkey', instanceTimeoutMs: 2_000 };
    const redlock = new Redlock(servers.map((server) => valkey(server.url)), options);
    const rival = new Redlock(servers.map((server) => valkey(server.url)), options);
    redlock.on('error', () => undefined);
    rival.on('error', () => undefined);
    const name = uniqueName('quorum');
    const held = await redlock.lock(name).acquire({ leaseMs: 30_000 });
    expect(await rival.lock(name).tryAcquire()).toBeNull();
    const waiting = rival.lock(name).acquire({ waitMs: 10_000 });
    // The release message must be what wakes the waiter: it is subscribed before the release.
    await waitFor(async () => (await admin.pubsub('SHARDNUMSUB', rival.lock(name).keys.channel))[1] === 1);
    await held.release();
    const next = await waiting;
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
    await redlock.close();
    await rival.close();
  });
});

describe('iovalkey Cluster', () => {
  let cluster: RedisClusterFixture;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    for (const client of opened.splice(0)) client.disconnect();
    await cluster?.stop();
  });

  // iovalkey's Cluster has no sharded subscribers (ioredis's `shardedSubscribers`): its one
  // subscriber connection reaches one node, so a waiter on a lock of another node's slots is
  // woken by its own re-check (every handoffTimeoutMs) rather than by the release message, and
  // the refused subscription is reported as an `error` event (see the core README). Locking
  // itself is the same: this checks exclusion, re-entry, tokens and hand-offs on every primary.
  it('LockClient over a Cluster: exclusive, re-entrant and handed over on every primary', async () => {
    const nodes = cluster.servers.slice(0, 1).map((server) => ({ host: server.host, port: server.port }));
    const cluster1 = new ValkeyCluster(nodes);
    const cluster2 = new ValkeyCluster(nodes);
    for (const client of [cluster1, cluster2]) {
      client.on('error', () => undefined);
      opened.push(client);
    }
    const a = new LockClient(cluster1, { prefix: 'valkey' });
    const b = new LockClient(cluster2, { prefix: 'valkey' });
    a.on('error', () => undefined);
    b.on('error', () => undefined);
    const names = Array.from({ length: 30 }, (_, i) => `job:${i}`);
    expect(new Set(names.map((n) => a.lock(n).keys.slot)).size).toBeGreaterThan(20);
    for (const name of names) {
      await a.lock(name).withLock(async (lease) => {
        const inner = await a.lock(name).acquire();
        expect(inner.token).toBe(lease.token);
        expect(await b.lock(name).tryAcquire()).toBeNull();
        await inner.release();
      });
    }
    // 30 s leases, 10 s waits: each waiter gets the lock from the release, not the lease end.
    for (const name of names.slice(0, 6)) {
      const held = await a.lock(name).acquire({ leaseMs: 30_000 });
      const waiting = b.lock(name).acquire({ waitMs: 10_000 });
      await held.release();
      const next = await waiting;
      expect(next.token).toBeGreaterThan(held.token);
      await next.release();
    }
    await a.close();
    await b.close();
  }, 60_000);
});
