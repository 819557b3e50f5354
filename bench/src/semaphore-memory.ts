/**
 * Redis memory per held semaphore permit lease, beside the mutex's, by the
 * same accounting as the renewal scenario (`keyBytes`: `MEMORY USAGE` of
 * every key plus the main and expires hash tables). Run: `pnpm --filter
 * @holdfast/bench bench:semaphore-memory`.
 */
import { LockClient, type LeaseLike } from '@holdfast/core';
import { Redis } from 'ioredis';
import { RedisServer } from './processes.js';
import { keyBytes } from './scenario-renewal.js';

const N = 2000;

async function measure(server: RedisServer, take: (locks: LockClient, i: number) => Promise<LeaseLike>): Promise<number> {
  await server.admin.flushall();
  const before = await keyBytes(server);
  const redis = new Redis({ port: server.port, host: '127.0.0.1' });
  const locks = new LockClient(redis, { leaseMs: 600_000 });
  const leases: LeaseLike[] = [];
  for (let i = 0; i < N; i += 100) {
    leases.push(...(await Promise.all(Array.from({ length: 100 }, (_, j) => take(locks, i + j)))));
  }
  const held = await keyBytes(server);
  await locks.close();
  redis.disconnect();
  return (held - before) / leases.length;
}

const server = await RedisServer.start();
try {
  const mutex = await measure(server, (locks, i) => locks.lock(`m:${i}`).acquire());
  const own = await measure(server, (locks, i) => locks.semaphore(`s:${i}`, { permits: 4 }).acquire());
  // Up to 128 holders a semaphore's hash and sorted set stay listpacks (Redis's
  // *-max-listpack-entries defaults); past that they become hash tables and a skiplist.
  const small = await measure(server, (locks, i) => locks.semaphore(`p:${i % 32}`, { permits: 64 }).acquire());
  const large = await measure(server, (locks) => locks.semaphore('pool', { permits: N }).acquire());
  const rows = [
    ['mutex: one held lock per name', mutex],
    ['semaphore: one lease per semaphore (count and holder)', own],
    ['semaphore: 32 semaphores of 64 permits, ~63 leases each', small],
    [`semaphore: one semaphore of ${N} permits, ${N} leases`, large],
  ] as const;
  console.log(`Redis memory per held lease (${N} leases, MEMORY USAGE accounting):`);
  for (const [what, bytes] of rows) console.log(`  ${what}: ${Math.round(bytes)} B`);
} finally {
  await server.stop();
}
