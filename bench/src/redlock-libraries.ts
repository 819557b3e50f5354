import { randomBytes } from 'node:crypto';
import Redlock from 'redlock';
import { RedlockMutex } from 'redis-semaphore';
import type { Redis } from 'ioredis';
import { counted } from './command-counter.js';
import { LEASE_MS, lostLocks, type Locker } from './libraries.js';
import { Redlock as HoldfastRedlock } from '@holdfast/redlock';
import { connect } from './processes.js';

/** Scenario 4's libraries: one ioredis client per independent instance, ioredis defaults. */
export interface MultiLibrary {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  open(ports: readonly number[]): Promise<Locker>;
}

async function clientsFor(ports: readonly number[]): Promise<Redis[]> {
  const clients = ports.map((port) => counted(connect(port)));
  await Promise.all(clients.map((c) => c.ping()));
  return clients;
}

function disconnectAll(clients: readonly Redis[]): void {
  for (const c of clients) c.disconnect();
}

const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

export const multiFloor: MultiLibrary = {
  id: 'floor',
  label: 'floor: SET NX PX + EVALSHA on every instance',
  settings: 'no library: SET NX PX 30000 on all instances in parallel, then EVALSHA compare-and-delete on all',
  async open(ports) {
    const clients = await clientsFor(ports);
    const shas = (await Promise.all(clients.map((c) => c.script('LOAD', COMPARE_AND_DELETE)))) as string[];
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    return {
      async acquire(key) {
        const token = `${prefix}:${++n}`;
        const replies = await Promise.all(clients.map((c) => c.set(key, token, 'PX', LEASE_MS, 'NX')));
        if (replies.filter((r) => r === 'OK').length <= clients.length / 2) throw new Error('floor: no quorum');
        return async () => {
          await Promise.all(clients.map((c, i) => c.evalsha(shas[i]!, 1, key, token)));
        };
      },
      async close() {
        disconnectAll(clients);
      },
    };
  },
};

type RedlockCtor = new (clients: Redis[], settings?: object) => {
  acquire(resources: string[], duration: number): Promise<{ release(): Promise<unknown> }>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
};

function nodeRedlock(id: string, label: string, Ctor: RedlockCtor): MultiLibrary {
  return {
    id,
    label,
    settings: 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms; quorum N/2+1; lease 30 s',
    async open(ports) {
      const clients = await clientsFor(ports);
      const redlock = new Ctor(clients);
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
    },
  };
}

export const redlockMutex: MultiLibrary = {
  id: 'redis-semaphore:redlock',
  label: 'redis-semaphore RedlockMutex',
  settings: 'defaults: retryInterval 10 ms, acquireTimeout 10 s, lockTimeout 10 s; waits for every instance',
  async open(ports) {
    const clients = await clientsFor(ports);
    return {
      async acquire(key, signal) {
        const mutex = new RedlockMutex(clients, key, { onLockLost: () => void lostLocks.count++ });
        await mutex.acquire(signal);
        return () => mutex.release();
      },
      async close() {
        disconnectAll(clients);
      },
    };
  },
};

/** holdfast's Redlock (scenario 4's holdfast row). */
export async function holdfastRedlock(): Promise<{ library?: MultiLibrary; note?: string }> {
  return {
    library: {
      id: 'holdfast:redlock',
      label: 'holdfast Redlock',
      settings: "new Redlock(clients, { prefix }) defaults",
      async open(ports) {
        const clients = await clientsFor(ports);
        const redlock = new HoldfastRedlock(clients, { prefix: 'bench' });
        redlock.on('error', () => undefined);
        return {
          async acquire(key, signal) {
            const lease = await redlock.lock(key).acquire(signal ? { signal } : undefined);
            return () => lease.release();
          },
          async close() {
            await redlock.close().catch(() => undefined);
            disconnectAll(clients);
          },
        };
      },
    },
  };
}

export const NODE_REDLOCKS: readonly MultiLibrary[] = [
  nodeRedlock('redlock5', 'redlock@5 beta.2', Redlock as unknown as RedlockCtor),
  redlockMutex,
];
