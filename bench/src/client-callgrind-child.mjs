import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * One library's uncontended acquire + release, run under callgrind by
 * client-callgrind.ts: `node client-callgrind-child.mjs <lib> <port> <warmup> <cycles>`
 * (lib: holdfast, redis-semaphore, floor, or floor-args: the floor sending holdfast's arguments).
 * Plain JavaScript, so no TypeScript loader runs under callgrind. Each library
 * is used as in libraries.ts (holdfast: one LockClient and one lock object for
 * the key; redis-semaphore: a new Mutex per cycle; the floor: SET NX PX, then
 * EVALSHA of a compare-and-delete), without the bench's command counter. The
 * parent subtracts a run with 0 measured cycles (same start-up, connection and
 * warm-up), so only the measured cycles' instructions remain.
 */

const LEASE_MS = 30_000;
const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/** What holdfast sends beyond the floor in one cycle, shaped as holdfast's own strings for `key`. */
function extraArguments(key, n) {
  const keys = ['q', 'w'].map((letter) => `bench:{4xr}:${letter}:${key}`);
  const requestId = () => `${n.toString(36).padStart(12, 'x')}`;
  const channel = `bench:{4xr}:c:${key}`;
  return [...keys, 'bench:{4xr}:fence', String(LEASE_MS), requestId(), 'try', '2000', channel, ...keys, 'bench:{4xr}:fence', requestId(), '2000'];
}

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
  if (lib === 'floor' || lib === 'floor-args') {
    const sha = /** @type {string} */ (await redis.script('LOAD', COMPARE_AND_DELETE));
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    return {
      async cycle(key) {
        const token = `${prefix}:${++n}`;
        if ((await redis.set(key, token, 'PX', LEASE_MS, 'NX')) !== 'OK') throw new Error('floor: key busy');
        if (lib === 'floor') await redis.evalsha(sha, 1, key, token);
        // The floor plus, as ARGV the script ignores, the 13 arguments holdfast's two
        // calls send beyond the floor's 9, as the same strings (its two calls send
        // 4 keys each, and owner, request id, lease, mode, hand-off ms and channel).
        else await redis.evalsha(sha, 1, key, token, ...extraArguments(key, n));
      },
      close: async () => undefined,
    };
  }
  throw new Error(`unknown library ${lib}`);
}

async function main(lib, port, warmup, cycles) {
  const redis = new Redis({ host: '127.0.0.1', port });
  redis.on('error', () => undefined);
  await redis.ping();
  const locker = await open(lib, redis);
  const key = `bench-cg-${lib}-${process.pid}`;
  try {
    for (let i = 0; i < warmup; i++) await locker.cycle(key);
    for (let i = 0; i < cycles; i++) await locker.cycle(key);
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
