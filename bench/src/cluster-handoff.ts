import { LockClient } from '@holdfast/core';
import { startRedis, startRedisCluster } from '@holdfast/test-utils';
import type { Cluster, Redis } from 'ioredis';
import { summarize } from './stats.js';

/**
 * `pnpm --filter @holdfast/bench run bench:cluster`: hand-off gap (release sent → the waiter on another
 * client holds the lock) on one redis-server and on a 3-primary / 3-replica cluster, in the same run, for
 * many lock names (so every primary serves some), beside the bare pub/sub path under any hand-off.
 */

const ROUNDS = Number(process.env['ROUNDS'] ?? 300);

async function handoffGaps(a: Redis | Cluster, b: Redis | Cluster, prefix: string): Promise<number[]> {
  const holder = new LockClient(a, { prefix });
  const waiter = new LockClient(b, { prefix });
  const gaps: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const name = `gap:${i % 30}`;
    const held = await holder.lock(name).acquire({ leaseMs: 20_000 });
    const waiting = waiter.lock(name).acquire({ waitMs: 10_000 });
    // Let the waiter queue and sleep.
    await new Promise((r) => setTimeout(r, 2));
    const releasedAt = performance.now();
    await held.release();
    const next = await waiting;
    gaps.push(performance.now() - releasedAt);
    await next.release();
  }
  await holder.close();
  await waiter.close();
  return gaps.slice(Math.floor(ROUNDS / 10)); // the first rounds subscribe
}

/** The floor under any pub/sub hand-off: a script's SPUBLISH reaching a subscriber, no lock at all. */
async function pubsubFloor(publisher: Redis, subscriber: Redis): Promise<number[]> {
  await subscriber.ssubscribe('floor');
  const sha = String(await publisher.script('LOAD', "redis.call('SPUBLISH', KEYS[1], 'x') return 1"));
  const gaps: number[] = [];
  let sentAt = 0;
  let delivered: () => void = () => {};
  subscriber.on('smessage', () => {
    gaps.push(performance.now() - sentAt);
    delivered();
  });
  for (let i = 0; i < ROUNDS; i++) {
    const arrived = new Promise<void>((resolve) => (delivered = resolve));
    sentAt = performance.now();
    await publisher.evalsha(sha, 1, 'floor');
    await arrived;
    await new Promise((r) => setTimeout(r, 2));
  }
  return gaps.slice(Math.floor(ROUNDS / 10));
}

const server = await startRedis();
const cluster = await startRedisCluster(3);
try {
  const rows: [string, number[]][] = [['bare SPUBLISH → SSUBSCRIBE, standalone (no lock)', await pubsubFloor(server.client(), server.client())]];
  for (let round = 0; round < 2; round++) {
    rows.push([`standalone (round ${round + 1})`, await handoffGaps(server.client(), server.client(), `s${round}`)]);
    rows.push([`cluster (round ${round + 1})`, await handoffGaps(cluster.client(), cluster.client(), `c${round}`)]);
  }
  console.log('| deployment | hand-offs | gap p50 ms | gap p99 ms |');
  console.log('| --- | --- | --- | --- |');
  for (const [label, gaps] of rows) {
    const s = summarize(gaps);
    console.log(`| ${label} | ${gaps.length} | ${s.p50.toFixed(2)} | ${s.p99.toFixed(2)} |`);
  }
} finally {
  await cluster.stop();
  await server.stop();
}
