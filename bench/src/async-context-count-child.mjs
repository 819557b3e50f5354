import { Redis } from 'ioredis';
import { promiseLoop } from './promise-loop.mjs';

/**
 * One state of the counted AsyncLocalStorage measurement
 * (async-context-callgrind.ts), run under callgrind:
 * `node async-context-count-child.mjs <state> <port> <iterations>`; plain JavaScript, so no TypeScript loader runs under callgrind. Sets the state
 * up exactly as async-context-child.ts does, runs the promise loop once and
 * exits; the parent subtracts a run with 0 iterations, so start-up, module
 * loading and the lock calls cancel out and only the loop's instructions remain.
 */

/**
 * @param {'none' | 'acquire' | 'withLock' | 'insideWithLock'} state
 * @param {number} port
 * @param {number} iterations
 */
async function main(state, port, iterations) {
  const redis = new Redis({ host: '127.0.0.1', port });
  redis.on('error', () => undefined);
  await redis.ping();
  try {
    if (state === 'none') return await promiseLoop(iterations);
    const { LockClient } = await import('@holdfast/core');
    const client = new LockClient(redis, { prefix: `bench-als-count-${process.pid}` });
    client.on('error', () => undefined);
    const lock = client.lock('unrelated');
    try {
      if (state === 'acquire') {
        for (let i = 0; i < 10; i++) await (await lock.acquire()).release();
        return await promiseLoop(iterations);
      }
      if (state === 'withLock') {
        for (let i = 0; i < 10; i++) await lock.withLock(() => undefined);
        return await promiseLoop(iterations);
      }
      return await lock.withLock(() => promiseLoop(iterations));
    } finally {
      await client.close();
    }
  } finally {
    redis.disconnect();
  }
}

const [state, port, iterations] = process.argv.slice(2);
main(/** @type {any} */ (state), Number(port), Number(iterations)).then(
  (checksum) => console.log(checksum),
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
