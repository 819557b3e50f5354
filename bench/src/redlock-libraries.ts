import { randomBytes } from 'node:crypto';
import { Redlock as HoldfastRedlock } from '@holdfast/redlock';
import { clientsFor, COMPARE_AND_DELETE, disconnectAll, LEASE_MS, redlockLocker, semaphoreLocker, type Locker } from './libraries.js';

/** Scenario 4's libraries: one ioredis client per independent instance, ioredis defaults. */
export interface MultiLibrary {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  open(ports: readonly number[]): Promise<Locker>;
}

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

/** holdfast's Redlock (scenario 4's holdfast row). */
export const holdfastRedlock: MultiLibrary = {
  id: 'holdfast:redlock',
  label: 'holdfast Redlock',
  settings: 'new Redlock(clients, { prefix }) defaults',
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
};

export const NODE_REDLOCKS: readonly MultiLibrary[] = [
  {
    id: 'redlock5',
    label: 'redlock@5 beta.2',
    settings: 'defaults: retryCount 10, retryDelay 200 ms, retryJitter 100 ms; quorum N/2+1; lease 30 s',
    open: async (ports) => redlockLocker(await clientsFor(ports)),
  },
  {
    id: 'redis-semaphore:redlock',
    label: 'redis-semaphore RedlockMutex',
    settings: 'defaults: retryInterval 10 ms, acquireTimeout 10 s, lockTimeout 10 s; waits for every instance',
    open: async (ports) => semaphoreLocker(await clientsFor(ports), true),
  },
];
