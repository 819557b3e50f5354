import { LockClient } from '@holdfast/core';
import { startRedis, startRedisCluster, waitFor, type RedisClusterFixture, type RedisServer } from '@holdfast/test-utils';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channelOf } from '../src/index.js';
import { underPty } from './support.js';

/** Subscribers of a sharded channel, over every primary (only the slot's owner has any). */
async function shardSubscribers(nodes: (Redis | Cluster)[], channel: string): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const [, count] = (await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
    total += Number(count);
  }
  return total;
}

/**
 * Six hand-offs, all within one refresh of a slow `watch` (comparing
 * refreshes would see at most one per lock): four of a mutex between two
 * clients, one of a read-write lock (its writer to a queued reader), one of a
 * semaphore's permits. The watch must report exactly six.
 */
async function handoffsUnderWatch(make: () => Redis | Cluster, nodes: (Redis | Cluster)[], url: string, extra: string[]) {
  const prefix = `wh${Math.random().toString(36).slice(2, 7)}`;
  const a = new LockClient(make(), { prefix, name: 'a' });
  const b = new LockClient(make(), { prefix, name: 'b' });
  const admin = make();
  const queued = async (key: string) => waitFor(async () => (await admin.llen(key)) === 1);
  try {
    let lease = await a.lock('relay').acquire({ leaseMs: 60_000 });
    const writer = await a.readWriteLock('shelf').write.acquire({ leaseMs: 60_000 });
    const permits = await a.semaphore('pool', { permits: 1 }).acquire({ leaseMs: 60_000 });
    const channels = [
      channelOf(prefix, { name: 'relay', kind: 'lock' }),
      channelOf(prefix, { name: 'shelf', kind: 'rwlock' }),
      channelOf(prefix, { name: 'pool', kind: 'semaphore' }),
    ];
    // Nobody waits yet: a subscriber on each channel is the watch's.
    for (const channel of channels) expect(await shardSubscribers(nodes, channel)).toBe(0);
    const watching = underPty(['watch', '--url', url, '--prefix', prefix, '--interval', '1500', ...extra], {
      interruptAfter: 'hand-offs since start 6',
    });
    for (const channel of channels) await waitFor(async () => (await shardSubscribers(nodes, channel)) === 1, { timeoutMs: 20_000 });

    const clients = [a, b];
    for (let i = 0; i < 4; i++) {
      const next = clients[(i + 1) % 2]!.lock('relay').acquire({ waitMs: 30_000, leaseMs: 60_000 });
      await queued(a.lock('relay').keys.queue);
      await lease.release();
      lease = await next;
    }
    const reader = b.readWriteLock('shelf').read.acquire({ waitMs: 30_000 });
    await queued(a.readWriteLock('shelf').read.keys.queue);
    await writer.release();
    await (await reader).release();
    const permit = b.semaphore('pool', { permits: 1 }).acquire({ waitMs: 30_000 });
    await queued(a.semaphore('pool', { permits: 1 }).keys.queue);
    await permits.release();
    await (await permit).release();
    await lease.release();

    const { code, output } = await watching;
    expect(code).toBe(0);
    const counts = [...output.matchAll(/hand-offs since start (\d+)/g)].map((m) => Number(m[1]));
    expect(counts[0]).toBe(0);
    expect(counts.at(-1)).toBe(6);
    expect(Math.max(...counts)).toBe(6);
    expect(output.endsWith('\x1b[?1049l')).toBe(true);
  } finally {
    await Promise.all([a.close(), b.close()]);
    admin.disconnect();
  }
}

describe('holdfast watch counts every hand-off (under a pty)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('on a standalone server', async () => {
    await handoffsUnderWatch(() => server.client(), [server.client()], server.url, []);
  }, 60_000);
});

describe('holdfast watch counts every hand-off on a Cluster (under a pty)', () => {
  let cluster: RedisClusterFixture;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('over every primary', async () => {
    await handoffsUnderWatch(() => cluster.client(), cluster.servers.map((s) => s.client()), cluster.servers[0]!.url, ['--cluster']);
  }, 60_000);
});
