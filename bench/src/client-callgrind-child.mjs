import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/**
 * One library's uncontended acquire + release, run under callgrind by client-callgrind.ts: `node
 * client-callgrind-child.mjs <lib> <port[,port...]> <warmup> <cycles>` (lib: holdfast, redis-semaphore,
 * floor, or floor-args: the floor sending holdfast's arguments; over every port: redlock:holdfast,
 * redlock:redlock5, redlock:floor, redlock:floor-args, and redlock:commands: holdfast's Redlock's own
 * commands with as little JavaScript as can send them).
 */

const LEASE_MS = 30_000;
const COMPARE_AND_DELETE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0`;

/**
 * What holdfast sends beyond the floor in one cycle (a LockClient's two calls, or a Redlock's on one
 * instance), shaped as holdfast's own strings for `key`: 13 arguments.
 */
function extraArguments(key, n) {
  const keys = ['q', 'w'].map((letter) => `bench:{4xr}:${letter}:${key}`);
  const requestId = () => `${n.toString(36).padStart(12, 'x')}`;
  const channel = `bench:{4xr}:c:${key}`;
  return [...keys, 'bench:{4xr}:fence', String(LEASE_MS), requestId(), 'try', '2000', channel, ...keys, 'bench:{4xr}:fence', requestId(), '2000'];
}

/** @param {Redis[]} clients */
async function openRedlock(lib, clients) {
  if (lib === 'redlock:holdfast') {
    const { Redlock } = await import('@holdfast/redlock');
    // Under callgrind the client runs some 50 times slower: replies come later than the 50 ms
    // instanceTimeoutMs (and the first ones than the 5 s commandTimeoutMs).
    const redlock = new Redlock(clients, { prefix: 'bench', instanceTimeoutMs: 10_000, commandTimeoutMs: 120_000 });
    redlock.on('error', () => undefined);
    let lock;
    return {
      async cycle(key) {
        lock ??= redlock.lock(key);
        const lease = await lock.acquire();
        await lease.release();
      },
      close: () => redlock.close(),
    };
  }
  if (lib === 'redlock:redlock5') {
    const { default: Redlock } = await import('redlock');
    const redlock = new Redlock(clients);
    redlock.on('error', () => undefined);
    return {
      async cycle(key) {
        const lock = await redlock.acquire([key], LEASE_MS);
        await lock.release();
      },
      close: async () => undefined,
    };
  }
  if (lib === 'redlock:commands') return openRedlockCommands(clients);
  if (lib === 'redlock:floor' || lib === 'redlock:floor-args') {
    const shas = /** @type {string[]} */ (await Promise.all(clients.map((c) => c.script('LOAD', COMPARE_AND_DELETE))));
    const prefix = randomBytes(6).toString('hex');
    let n = 0;
    return {
      async cycle(key) {
        const token = `${prefix}:${++n}`;
        const replies = await Promise.all(clients.map((c) => c.set(key, token, 'PX', LEASE_MS, 'NX')));
        if (replies.some((reply) => reply !== 'OK')) throw new Error('redlock floor: key busy');
        const extra = lib === 'redlock:floor' ? [] : extraArguments(key, n);
        await Promise.all(clients.map((c, i) => c.evalsha(shas[i], 1, key, token, ...extra)));
      },
      close: async () => undefined,
    };
  }
  throw new Error(`unknown library ${lib}`);
}

/**
 * The commands of holdfast's uncontended Redlock cycle, and nothing else: take.lua (its copy for the default
 * lease: the lock, queue and fence keys and the string lock's prefix) on every instance, decided at a
 * majority, then release-taken.lua on every instance that granted, with the string lock it wrote there (the
 * prefix and the token it drew), decided at a majority.
 */
async function openRedlockCommands(clients) {
  const { MUTEX, lockKeys, takeCall, randomId } = await import('@holdfast/core/internal');
  const keys = lockKeys('bench', `commands-${process.pid}`);
  const take = takeCall(MUTEX, keys, 'owner', 'request', LEASE_MS, true).script;
  const releaseTaken = MUTEX.releaseTaken;
  for (const c of clients) await Promise.all([c.script('LOAD', take.source), c.script('LOAD', releaseTaken.source)]);
  const quorum = Math.floor(clients.length / 2) + 1;
  const clientId = randomId(9);
  /** Resolves once `quorum` calls returned `ok(reply, i)`; rejects once a majority can no longer. */
  const majority = (send, ok) =>
    new Promise((resolve, reject) => {
      let yes = 0;
      let no = 0;
      clients.forEach((c, i) =>
        send(c, i).then((reply) => {
          if (ok(reply, i)) {
            if (++yes === quorum) resolve();
          } else if (++no > clients.length - quorum) reject(new Error('redlock commands: no majority'));
        }, reject),
      );
    });
  const granted = (reply) => typeof reply === 'number' && reply > 0;
  return {
    async cycle() {
      const prefix = `${clientId}:${randomId()}@${randomId()}|`;
      const takes = clients.map((c) => c.evalsha(take.sha, 3, keys.lock, keys.queue, keys.fence, prefix));
      await majority((_, i) => takes[i], granted);
      const tokens = await Promise.all(takes);
      await majority(
        (c, i) => (granted(tokens[i]) ? c.evalsha(releaseTaken.sha, 1, keys.lock, prefix + tokens[i]) : Promise.resolve(null)),
        (reply) => reply === 0,
      );
    },
    close: async () => undefined,
  };
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
        // The floor plus, as ARGV the script ignores, the 13 arguments holdfast's two calls send beyond the
        // floor's 9, as the same strings (its two calls send 4 keys each, and owner, request id, lease, mode,
        // hand-off ms and channel).
        else await redis.evalsha(sha, 1, key, token, ...extraArguments(key, n));
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

async function main(lib, ports, warmup, cycles) {
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  for (const redis of clients) redis.on('error', () => undefined);
  await Promise.all(clients.map((redis) => redis.ping()));
  const locker = lib.startsWith('redlock:') ? await openRedlock(lib, clients) : await open(lib, clients[0]);
  const key = `bench-cg-${lib.replace(':', '-')}-${process.pid}`;
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
    for (const redis of clients) redis.disconnect();
  }
}

const [lib, port, warmup, cycles] = process.argv.slice(2);
main(lib, port.split(',').map(Number), Number(warmup), Number(cycles)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
