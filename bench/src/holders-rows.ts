import { LockClient } from '@holdfast/core';
import type { Redis } from 'ioredis';
import { Semaphore as RsSemaphore } from 'redis-semaphore';
import { counted } from './command-counter.js';
import { connect } from './processes.js';

/**
 * The rows of the holders scenario (scenario-holders.ts): how `n` holders are put on one name, and the cycle
 * measured on that name while they hold.
 */

/** Lease of the holders put on a name beforehand: longer than any measurement, never renewed. */
export const HOLD_MS = 600_000;
/** A semaphore gets this many permits more than its holders take, so the measured permit is always free. */
export const SPARE_PERMITS = 16;
/** Holder acquisitions in flight at once while a name is filled. */
const FILL_BATCH = 500;

export interface HoldersRow {
  readonly id: string;
  readonly label: string;
  /** What one measured cycle is, and with which settings. */
  readonly cycle: string;
  /** `n` holders on `name`, then the measured cycle on it. */
  prepare(port: number, name: string, n: number): Promise<Prepared>;
}

export interface Prepared {
  /** One measured cycle; throws when the cycle did not do what the row says. */
  cycle(): Promise<void>;
  close(): Promise<void>;
}

/** `count` calls of `take`, FILL_BATCH at a time. */
export async function fill(count: number, take: (i: number) => Promise<unknown>): Promise<void> {
  for (let first = 0; first < count; first += FILL_BATCH) {
    const batch: Promise<unknown>[] = [];
    for (let i = first; i < Math.min(count, first + FILL_BATCH); i++) batch.push(take(i));
    await Promise.all(batch);
  }
}

/** A LockClient on a connection of its own: `counted` for the measured side. */
export function holdfastClient(port: number, measured: boolean): { redis: Redis; locks: LockClient; close(): Promise<void> } {
  const redis = measured ? counted(connect(port)) : connect(port);
  const locks = new LockClient(redis, { prefix: 'bench' });
  locks.on('error', () => undefined);
  return {
    redis,
    locks,
    async close() {
      await locks.close();
      redis.disconnect();
    },
  };
}

/** holdfast: the holders through one client, the cycle through another. */
function holdfastRow(
  row: Omit<HoldersRow, 'prepare'>,
  hold: (locks: LockClient, name: string, n: number) => Promise<void>,
  cycle: (locks: LockClient, name: string, n: number) => Promise<void>,
): HoldersRow {
  return {
    ...row,
    async prepare(port, name, n) {
      const holders = holdfastClient(port, false);
      const measured = holdfastClient(port, true);
      await hold(holders.locks, name, n);
      return {
        cycle: () => cycle(measured.locks, name, n),
        async close() {
          await measured.close();
          await holders.close();
        },
      };
    },
  };
}

const readers = (locks: LockClient, name: string, n: number) => fill(n, () => locks.readWriteLock(name).read.acquire({ leaseMs: HOLD_MS }));

export const HOLDERS_ROWS: readonly HoldersRow[] = [
  holdfastRow(
    { id: 'holdfast:mutex', label: 'holdfast mutex (reference: a name of its own, no other holder)', cycle: 'lock(name).acquire() + release(), LockClient defaults' },
    async () => undefined,
    async (locks, name) => {
      await (await locks.lock(`${name}:mutex`).acquire()).release();
    },
  ),
  holdfastRow(
    { id: 'holdfast:read', label: 'holdfast read-write lock, read', cycle: 'readWriteLock(name).read.acquire() + release() beside n readers, LockClient defaults' },
    readers,
    async (locks, name) => {
      await (await locks.readWriteLock(name).read.acquire()).release();
    },
  ),
  holdfastRow(
    {
      id: 'holdfast:write-refused',
      label: 'holdfast read-write lock, write refused by the readers',
      cycle: 'readWriteLock(name).write.tryAcquire() seeing n readers and returning null (one script call; 1 reader in the n = 0 column)',
    },
    (locks, name, n) => readers(locks, name, Math.max(1, n)),
    async (locks, name) => {
      const lease = await locks.readWriteLock(name).write.tryAcquire();
      if (lease) throw new Error('write granted beside readers');
    },
  ),
  holdfastRow(
    { id: 'holdfast:semaphore', label: 'holdfast Semaphore, 1 permit', cycle: `semaphore(name, { permits: n + ${SPARE_PERMITS} }).acquire() + release() beside n holders of 1 permit, LockClient defaults` },
    (locks, name, n) => fill(n, () => locks.semaphore(name, { permits: n + SPARE_PERMITS }).acquire({ leaseMs: HOLD_MS })),
    async (locks, name, n) => {
      await (await locks.semaphore(name, { permits: n + SPARE_PERMITS }).acquire()).release();
    },
  ),
  {
    id: 'redis-semaphore:semaphore',
    label: 'redis-semaphore Semaphore, 1 permit',
    cycle:
      `new Semaphore(redis, name, n + ${SPARE_PERMITS}, { lockTimeout: ${HOLD_MS} }).acquire() + release() beside n holders ` +
      '(every instance of one name needs the same lockTimeout: its acquire drops entries older than its own)',
    async prepare(port, name, n) {
      const holderRedis = connect(port);
      const redis = counted(connect(port));
      const limit = n + SPARE_PERMITS;
      const options = { lockTimeout: HOLD_MS, onLockLost: () => undefined };
      // The holders are never refreshed (the measurement ends long before their lockTimeout).
      await fill(n, () => new RsSemaphore(holderRedis, name, limit, { ...options, refreshInterval: 0 }).acquire());
      return {
        async cycle() {
          const semaphore = new RsSemaphore(redis, name, limit, options);
          await semaphore.acquire();
          await semaphore.release();
        },
        async close() {
          redis.disconnect();
          holderRedis.disconnect();
        },
      };
    },
  },
];
