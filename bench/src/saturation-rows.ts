import { LockClient } from '@holdfast/core';
import { Semaphore as RsSemaphore } from 'redis-semaphore';
import { counted } from './command-counter.js';
import { byId, type Locker } from './libraries.js';
import { connect } from './processes.js';

/**
 * The rows of the saturation scenario (scenario-saturation.ts): what one cycle is, and how a client process
 * opens it.
 */

/** Permits of every semaphore of the scenario, as in scenario 6. */
export const SATURATION_PERMITS = 3;

export interface SaturationRow {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  /** Every loop of every process on one name (readers sharing a lock); otherwise one name per loop. */
  readonly sharedName: boolean;
  /** The row the "× redis-semaphore" column divides by: its Mutex, or its Semaphore for the semaphore rows. */
  readonly baselineId: string;
  open(port: number): Promise<Locker>;
}

/** A mutex row: the library of scenario 1 with this id. */
function mutex(id: string): SaturationRow {
  const lib = byId(id);
  return { id, label: lib.label, settings: lib.settings, sharedName: false, baselineId: 'redis-semaphore', open: (port) => lib.open(port) };
}

/** holdfast on its own connection, one LockClient per connection, `take` choosing the primitive. */
function holdfastRow(
  row: Omit<SaturationRow, 'open'>,
  take: (locks: LockClient, name: string) => Promise<{ release(): Promise<unknown> }>,
): SaturationRow {
  return {
    ...row,
    async open(port) {
      const redis = counted(connect(port));
      await redis.ping();
      const locks = new LockClient(redis, { prefix: 'bench' });
      locks.on('error', () => undefined);
      return {
        async acquire(name) {
          const lease = await take(locks, name);
          return async () => {
            await lease.release();
          };
        },
        async close() {
          await locks.close();
          redis.disconnect();
        },
      };
    },
  };
}

const rwSettings = 'LockClient defaults: lease 30 s; readWriteLock(name).read.acquire(), then release';

export const SATURATION_ROWS: readonly SaturationRow[] = [
  mutex('floor'),
  mutex('holdfast'),
  mutex('redis-semaphore'),
  mutex('redlock5'),
  holdfastRow(
    { id: 'holdfast:rw-read', label: 'holdfast read-write lock, readers (a name each)', settings: rwSettings, sharedName: false, baselineId: 'redis-semaphore' },
    (locks, name) => locks.readWriteLock(name).read.acquire(),
  ),
  holdfastRow(
    { id: 'holdfast:rw-read-shared', label: 'holdfast read-write lock, readers (all on one name)', settings: rwSettings, sharedName: true, baselineId: 'redis-semaphore' },
    (locks, name) => locks.readWriteLock(name).read.acquire(),
  ),
  holdfastRow(
    {
      id: 'holdfast:semaphore',
      label: 'holdfast Semaphore, one permit',
      settings: `LockClient defaults: lease 30 s; semaphore(name, { permits: ${SATURATION_PERMITS} }).acquire(), then release`,
      sharedName: false,
      baselineId: 'redis-semaphore:semaphore',
    },
    (locks, name) => locks.semaphore(name, { permits: SATURATION_PERMITS }).acquire(),
  ),
  {
    id: 'redis-semaphore:semaphore',
    label: 'redis-semaphore Semaphore, one permit',
    settings: `new Semaphore(redis, name, ${SATURATION_PERMITS}) defaults: retryInterval 10 ms, lockTimeout 10 s, refresh every 8 s`,
    sharedName: false,
    baselineId: 'redis-semaphore:semaphore',
    async open(port) {
      const redis = counted(connect(port));
      await redis.ping();
      return {
        async acquire(name) {
          const semaphore = new RsSemaphore(redis, name, SATURATION_PERMITS, { onLockLost: () => undefined });
          await semaphore.acquire();
          return () => semaphore.release();
        },
        async close() {
          redis.disconnect();
        },
      };
    },
  },
];

export function saturationRow(id: string): SaturationRow {
  const row = SATURATION_ROWS.find((r) => r.id === id);
  if (!row) throw new Error(`Unknown saturation row ${id}`);
  return row;
}
