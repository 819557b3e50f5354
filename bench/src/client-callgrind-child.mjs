import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * One library's uncontended acquire + release, run under callgrind by client-callgrind.ts: `node
 * client-callgrind-child.mjs <lib> <port> <warmup> <cycles>` (lib: holdfast, redis-semaphore or floor).
 */

const LEASE_MS = 30_000;
const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/** @param {Redis} redis @returns {Promise<{ cycle: (key: string) => Promise<void>, close: () => Promise<void> }>} */
async function open(lib, redis) {
  if (lib === 'holdfast') {
    const { LockClient } = await import('@holdfast/core');
    const client = new LockClient(redis, { prefix: 'bench' });
    client.on('error', () => undefined);
    let lock;
    return {
      async cycle(key) {
        lock ??= client.lock(key);
        const lease = await lock.acquire();
        await lease.release();
      },
      close: () => client.close(),
    };
  }
  if (lib === 'redis-semaphore') {
    const { Mutex } = await import('redis-semaphore');
    return {
      async cycle(key) {
        const mutex = new Mutex(redis, key, { onLockLost: () => undefined });
        await mutex.acquire();
        await mutex.release();
      },
      close: async () => undefined,
    };
  }
  if (lib === 'floor') {
    const sha = /** @type {string} */ (await redis.script('LOAD', COMPARE_AND_DELETE));
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    return {
      async cycle(key) {
        const token = `${prefix}:${++n}`;
        if ((await redis.set(key, token, 'PX', LEASE_MS, 'NX')) !== 'OK') throw new Error('floor: key busy');
        await redis.evalsha(sha, 1, key, token);
      },
      close: async () => undefined,
    };
  }
  throw new Error(`unknown library ${lib}`);
}

/** @param {{ cycle: (key: string) => Promise<void> }} locker @param {string} key @param {number} n */
async function repeat(locker, key, n) {
  for (let i = 0; i < n; i++) await locker.cycle(key);
}

async function main(lib, port, warmup, cycles) {
  const redis = new Redis({ host: '127.0.0.1', port });
  redis.on('error', () => undefined);
  await redis.ping();
  const locker = await open(lib, redis);
  const key = `bench-cg-${lib}-${process.pid}`;
  try {
    // One loop function for the warm-up and the measured cycles: it is optimized during the warm-up.
    await repeat(locker, key, warmup);
    await repeat(locker, key, cycles);
    // A full collection after the measured cycles, in the 0-cycle run too (right after the warm-up there):
    // whatever the cycles left is collected inside the window, whether or not V8 got to a major GC during
    // them.
    globalThis.gc?.();
  } finally {
    await locker.close();
    redis.disconnect();
  }
}

const [lib, port, warmup, cycles] = process.argv.slice(2);
main(lib, Number(port), Number(warmup), Number(cycles)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
