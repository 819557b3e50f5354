import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import Redlock from 'redlock';
import { Mutex } from 'redis-semaphore';
import type { Redis } from 'ioredis';
import { counted } from './command-counter.js';
import { openRedisson, redissonConnections } from './redisson.js';
import type { HoldfastClientOpener } from './library-types.js';

export type { HoldfastClientOpener } from './library-types.js';
import { onNodeRedis5 } from './node-redis-libraries.js';
import { connect } from './processes.js';

/** Scenario 5's way of holding many leases with automatic renewal, per library. */

export interface Holding {
  /** Leases the library reported lost so far. */
  lost(): number;
  releaseAll(): Promise<void>;
  close(): Promise<void>;
}

export interface RenewalLibrary {
  readonly id: string;
  readonly label: string;
  settings(timeoutMs: number): string;
  hold(port: number, names: readonly string[], timeoutMs: number): Promise<Holding>;
}

async function ready(port: number): Promise<Redis> {
  const redis = counted(connect(port));
  await redis.ping();
  return redis;
}

/** holdfast on ioredis: the rows `holdfast` and `holdfast:isolated`. */
const onIoredis: HoldfastClientOpener = {
  idSuffix: '',
  labelSuffix: '',
  settingsClient: 'client',
  async open(port) {
    const redis = await ready(port);
    return { client: redis, close: () => redis.disconnect() };
  },
};

/**
 * `isolated`: each acquire starts from its own setImmediate callback instead of one `Promise.all` in the
 * caller's async chain. holdfast marks the caller's chain on every acquire (AsyncLocalStorage), so the two
 * differ.
 */
function holdfastWatchdog(on: HoldfastClientOpener, isolated: boolean): RenewalLibrary {
  return {
    id: `holdfast${on.idSuffix}${isolated ? ':isolated' : ''}`,
    label: `holdfast${on.labelSuffix} + Watchdog${isolated ? ', one async chain per acquire' : ''}`,
    settings: (t) =>
      `new Watchdog(${on.settingsClient}, { timeoutMs: ${t} }): one batched renew call per ${Math.floor(t / 3)} ms tick; ` +
      (isolated ? 'each acquire() called from its own setImmediate callback' : 'Promise.all(names.map((n) => client.lock(n).acquire()))'),
    async hold(port, names, timeoutMs) {
      const opened = await on.open(port);
      const client = new LockClient(opened.client, { prefix: 'bench' });
      let lost = 0;
      client.on('lost', () => void lost++);
      client.on('error', () => undefined);
      const dog = new Watchdog(client, { timeoutMs });
      dog.on('error', () => undefined);
      const acquire = (name: string) => client.lock(name).acquire();
      const leases = await Promise.all(
        names.map((name) =>
          isolated ? new Promise<Awaited<ReturnType<typeof acquire>>>((resolve, reject) => setImmediate(() => acquire(name).then(resolve, reject))) : acquire(name),
        ),
      );
      return {
        lost: () => lost,
        async releaseAll() {
          await Promise.allSettled(leases.map((l) => l.release()));
        },
        async close() {
          await dog.stop();
          await client.close();
          opened.close();
        },
      };
    },
  };
}

export const semaphoreRefresh: RenewalLibrary = {
  id: 'redis-semaphore',
  label: 'redis-semaphore Mutex refresh',
  settings: (t) => `new Mutex(redis, key, { lockTimeout: ${t} }): one refresh per lock every ${Math.round(t * 0.8)} ms (default 0.8 × lockTimeout)`,
  async hold(port, names, timeoutMs) {
    const redis = await ready(port);
    let lost = 0;
    const mutexes = names.map((name) => new Mutex(redis, name, { lockTimeout: timeoutMs, onLockLost: () => void lost++ }));
    await Promise.all(mutexes.map((m) => m.acquire()));
    return {
      lost: () => lost,
      async releaseAll() {
        await Promise.allSettled(mutexes.map((m) => m.release()));
      },
      async close() {
        redis.disconnect();
      },
    };
  },
};

type UsingRedlock = {
  using(resources: string[], duration: number, routine: (signal: AbortSignal) => Promise<void>): Promise<void>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
};

function redlockUsing(id: string, label: string, Ctor: new (clients: Redis[]) => UsingRedlock): RenewalLibrary {
  return {
    id,
    label,
    settings: (t) => `using([key], ${t}, routine): each lock extended ${500} ms before expiry (automaticExtensionThreshold default)`,
    async hold(port, names, timeoutMs) {
      const redis = await ready(port);
      const redlock = new Ctor([redis]);
      redlock.on('error', () => undefined);
      let lost = 0;
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const acquired: Promise<void>[] = [];
      const routines = names.map((name) => {
        let onAcquired!: () => void;
        acquired.push(new Promise<void>((resolve) => (onAcquired = resolve)));
        return redlock
          .using([name], timeoutMs, async (signal) => {
            signal.addEventListener('abort', () => void lost++);
            onAcquired();
            await finished;
          })
          .catch(() => void lost++);
      });
      await Promise.all(acquired);
      return {
        lost: () => lost,
        async releaseAll() {
          finish();
          await Promise.allSettled(routines);
        },
        async close() {
          redis.disconnect();
        },
      };
    },
  };
}

export const redlock5Using = redlockUsing('redlock5', 'redlock@5 using()', Redlock as unknown as new (c: Redis[]) => UsingRedlock);

export const redissonWatchdog: RenewalLibrary = {
  id: 'node-redisson',
  label: 'node-redisson watchdog',
  settings: (t) => `new Redisson({ lockWatchdogTimeout: ${t}n }), lock(): one renewal per lock every ${Math.floor(t / 3)} ms`,
  async hold(port, names, timeoutMs) {
    const redisson = openRedisson(port, timeoutMs);
    await redisson.redis.ping();
    const locks = names.map((name) => redisson.getLock(name));
    await Promise.all(locks.map((l) => l.lock()));
    return {
      // Its renewal failures only go to console.error; loss shows as keys missing at the end.
      lost: () => 0,
      async releaseAll() {
        await Promise.allSettled(locks.map((l) => l.unlock()));
      },
      async close() {
        for (const connection of redissonConnections(redisson)) connection.disconnect();
      },
    };
  },
};

export const RENEWAL_LIBRARIES: readonly RenewalLibrary[] = [
  holdfastWatchdog(onIoredis, false),
  holdfastWatchdog(onIoredis, true),
  semaphoreRefresh,
  redlock5Using,
  redissonWatchdog,
  // Scenario 5 with the leases on a node-redis 5 client.
  holdfastWatchdog(onNodeRedis5, false),
];
