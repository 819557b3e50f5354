/**
 * Redis memory per held semaphore permit lease and per read hold, beside the mutex's, by the same accounting
 * as the renewal scenario (`keyBytes`: `MEMORY USAGE` of every key plus the main and expires hash tables).
 */
import { LockClient, type LeaseLike } from '@holdfast/core';
import { Redis } from 'ioredis';
import type { RedisServer } from './processes.js';
import { keyBytes } from './scenario-renewal.js';

export interface MemoryRow {
  readonly what: string;
  readonly bytesPerLease: number;
  /** Over the mutex's bytes per held lock, measured in the same run. */
  readonly ratio: number;
}

async function measure(server: RedisServer, n: number, take: (locks: LockClient, i: number) => Promise<LeaseLike>): Promise<number> {
  await server.admin.flushall();
  const before = await keyBytes(server);
  const redis = new Redis({ port: server.port, host: '127.0.0.1' });
  const locks = new LockClient(redis, { leaseMs: 600_000 });
  const leases: LeaseLike[] = [];
  for (let i = 0; i < n; i += 100) {
    leases.push(...(await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) => take(locks, i + j)))));
  }
  const held = await keyBytes(server);
  await locks.close();
  redis.disconnect();
  await server.admin.flushall();
  return (held - before) / leases.length;
}

/** `n` leases of each shape, held at once. */
export async function runSemaphoreMemory(server: RedisServer, n: number): Promise<MemoryRow[]> {
  const shapes: [string, (locks: LockClient, i: number) => Promise<LeaseLike>][] = [
    ['mutex: one held lock per name', (locks, i) => locks.lock(`m:${i}`).acquire()],
    ['read-write lock: one read hold per name', (locks, i) => locks.readWriteLock(`r:${i}`).read.acquire()],
    ['semaphore: one lease per semaphore (count and holder)', (locks, i) => locks.semaphore(`s:${i}`, { permits: 4 }).acquire()],
    // Up to 128 holders a semaphore's hash and sorted set stay listpacks (Redis's
    // *-max-listpack-entries defaults); past that they become hash tables and a skiplist.
    [`semaphore: 32 semaphores of 64 permits, ~${Math.round(n / 32)} leases each`, (locks, i) => locks.semaphore(`p:${i % 32}`, { permits: 64 }).acquire()],
    [`semaphore: one semaphore of ${n} permits, ${n} leases`, (locks) => locks.semaphore('pool', { permits: n }).acquire()],
  ];
  const bytes: number[] = [];
  for (const [, take] of shapes) bytes.push(await measure(server, n, take));
  return shapes.map(([what], i) => ({ what, bytesPerLease: bytes[i]!, ratio: bytes[i]! / bytes[0]! }));
}
