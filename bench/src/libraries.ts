import { randomBytes } from 'node:crypto';
import Redlock from 'redlock';
import { Mutex, RedlockMutex } from 'redis-semaphore';
import type { Redis } from 'ioredis';
import { counted } from './command-counter.js';
import { connect } from './processes.js';
import { handoffFloor } from './handoff-floor.js';
import { NODE_REDIS_LIBRARIES } from './node-redis-libraries.js';
import { holdfastLocker } from './holdfast-locker.js';
import { openRedisson, redissonConnections } from './redisson.js';
import type { Locker, LockLibrary } from './library-types.js';

export type { Locker, LockLibrary, Release } from './library-types.js';
export { holdfastLocker } from './holdfast-locker.js';
export { openRedisson, redissonConnections } from './redisson.js';

/**
 * One shape for every library: a worker opens a Locker (its own connection and its own library client),
 * acquires a key and gets back the function that releases it.
 */
/** Lease of every acquisition that names one: the floor's PX and holdfast's default. */
export const LEASE_MS = 30_000;

export const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/** One counted, connected ioredis client per port (scenario 4 opens one per instance). */
export async function clientsFor(ports: readonly number[]): Promise<Redis[]> {
  const clients = ports.map((port) => counted(connect(port)));
  await Promise.all(clients.map((c) => c.ping()));
  return clients;
}

export function disconnectAll(clients: readonly Redis[]): void {
  for (const c of clients) c.disconnect();
}

export const floor: LockLibrary = {
  id: 'floor',
  label: 'floor: SET NX PX + EVALSHA',
  settings: 'no library: SET key token NX PX 30000, then EVALSHA compare-and-delete',
  contends: false,
  async open(port) {
    const [redis] = (await clientsFor([port])) as [Redis];
    const sha = (await redis.script('LOAD', COMPARE_AND_DELETE)) as string;
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    return {
      async acquire(key) {
        const token = `${prefix}:${++n}`;
        if ((await redis.set(key, token, 'PX', LEASE_MS, 'NX')) !== 'OK') throw new Error('floor: key busy');
        return async () => {
          await redis.evalsha(sha, 1, key, token);
        };
      },
      async close() {
        redis.disconnect();
      },
    };
  },
};

export const holdfast: LockLibrary = {
  id: 'holdfast',
  label: 'holdfast',
  settings: "new LockClient(redis, { prefix }) defaults: lease 30 s, FIFO queue, pub/sub hand-off",
  contends: true,
  async open(port) {
    const [redis] = (await clientsFor([port])) as [Redis];
    return holdfastLocker(redis, () => redis.disconnect());
  },
};

/**
 * holdfast waiting without pub/sub (`wait: 'spin'`): no subscriber, each waiter polls its queue
 * place with backoff. Run in the multi-process scenario only, beside pub/sub and redis-semaphore's
 * polling Mutex (its uncontended path is holdfast's).
 */
export const holdfastSpin: LockLibrary = {
  id: 'holdfast:spin',
  label: 'holdfast (spin)',
  settings: "new LockClient(redis, { prefix, wait: 'spin' }): FIFO queue, hand-off found by polling (spinMinMs 10, spinMaxMs 100)",
  contends: false,
  async open(port) {
    const [redis] = (await clientsFor([port])) as [Redis];
    return holdfastLocker(redis, () => redis.disconnect(), { wait: 'spin' });
  },
};

type RedlockCtor = new (clients: Redis[], settings?: object) => {
  acquire(resources: string[], duration: number): Promise<{ release(): Promise<unknown> }>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
};

/** redlock@5 over `clients` (one, or one per instance); closing disconnects them. */
export function redlockLocker(clients: Redis[], settings: object = {}): Locker {
  const redlock = new (Redlock as unknown as RedlockCtor)(clients, settings);
  // Every busy attempt is emitted as an error; without a listener it would throw.
  redlock.on('error', () => undefined);
  return {
    async acquire(key) {
      const lock = await redlock.acquire([key], LEASE_MS);
      return async () => {
        await lock.release();
      };
    },
    async close() {
      disconnectAll(clients);
    },
  };
}

/** Locks the renewal loop of redis-semaphore reports lost (default handler throws from a timer). */
export const lostLocks = { count: 0 };

/** redis-semaphore's `Mutex` (one client) or `RedlockMutex` (every client), a new one per acquisition. */
export function semaphoreLocker(clients: Redis[], redlock: boolean): Locker {
  return {
    async acquire(key, signal) {
      const options = { onLockLost: () => void lostLocks.count++ };
      const mutex = redlock ? new RedlockMutex(clients, key, options) : new Mutex(clients[0]!, key, options);
      await mutex.acquire(signal);
      return () => mutex.release();
    },
    async close() {
      disconnectAll(clients);
    },
  };
}

const library = (id: string, label: string, settings: string, contends: boolean, locker: (clients: Redis[]) => Locker): LockLibrary => ({
  id,
  label,
  settings,
  contends,
  open: async (port) => locker(await clientsFor([port])),
});

export const redlock5 = library('redlock5', 'redlock@5 beta.2', 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms; lease 30 s', true, (c) => redlockLocker(c));
export const redlock5Fast = library(
  'redlock5:retry10',
  'redlock@5 beta.2, 10 ms retry',
  'retryDelay 10 ms, retryJitter 5 ms, retryCount -1 (unlimited); lease 30 s',
  true,
  (c) => redlockLocker(c, { retryDelay: 10, retryJitter: 5, retryCount: -1 }),
);
export const semaphoreMutex = library(
  'redis-semaphore',
  'redis-semaphore Mutex',
  'defaults: retryInterval 10 ms, acquireTimeout 10 s, lockTimeout 10 s, refresh every 8 s',
  true,
  (c) => semaphoreLocker(c, false),
);
export const semaphoreRedlockMutex = library('redis-semaphore:redlock', 'redis-semaphore RedlockMutex (1 node)', 'RedlockMutex over a single instance, defaults', false, (c) => semaphoreLocker(c, true));

export const redisson: LockLibrary = {
  id: 'node-redisson',
  label: 'node-redisson 1.0.4',
  settings: 'defaults: lock() with the 30 s watchdog, pub/sub unlock notification',
  contends: true,
  async open(port) {
    const client = openRedisson(port);
    await client.redis.ping();
    return {
      async acquire(key) {
        const lock = client.getLock(key);
        await lock.lock();
        return () => lock.unlock();
      },
      async close() {
        for (const connection of redissonConnections(client)) connection.disconnect();
      },
    };
  },
};

export const SINGLE_INSTANCE: readonly LockLibrary[] = [
  floor,
  handoffFloor,
  holdfast,
  holdfastSpin,
  redlock5,
  redlock5Fast,
  semaphoreMutex,
  semaphoreRedlockMutex,
  redisson,
  ...NODE_REDIS_LIBRARIES,
];

export function byId(id: string): LockLibrary {
  const found = SINGLE_INSTANCE.find((l) => l.id === id);
  if (!found) throw new Error(`Unknown library ${id}`);
  return found;
}
