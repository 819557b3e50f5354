import { Redis } from 'ioredis';
import { promiseLoop } from './promise-loop.mjs';

/**
 * One state of the AsyncLocalStorage measurement (scenario-async-context.ts), in a fresh process so no
 * earlier state leaves a hook behind: Node 20 turns promise hooks on for the whole process the first time an
 * AsyncLocalStorage is entered, and never off.
 */

export type AsyncContextState = 'none' | 'acquire' | 'withLock' | 'insideWithLock';

export interface ToAsyncContextChild {
  readonly state: AsyncContextState;
  readonly port: number;
  readonly iterations: number;
}

export interface FromAsyncContextChild {
  readonly state: AsyncContextState;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly checksum: number;
  readonly error?: string;
}

/** Timed 3 times after a warm-up; the fastest (CPU) run counts: the others only add what the machine did meanwhile. */
async function timed(iterations: number): Promise<{ wallMs: number; cpuMs: number; checksum: number }> {
  // Warm-up: the loop is compiled and optimised before it is timed.
  await promiseLoop(Math.ceil(iterations / 4));
  let best = { wallMs: Infinity, cpuMs: Infinity, checksum: 0 };
  for (let i = 0; i < 3; i++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const checksum = await promiseLoop(iterations);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const cpuMs = (cpu.user + cpu.system) / 1000;
    if (cpuMs < best.cpuMs) best = { wallMs, cpuMs, checksum };
  }
  return best;
}

async function run(message: ToAsyncContextChild): Promise<FromAsyncContextChild> {
  const redis = new Redis({ host: '127.0.0.1', port: message.port });
  redis.on('error', () => undefined);
  await redis.ping();
  try {
    if (message.state === 'none') return { state: message.state, ...(await timed(message.iterations)) };
    const { LockClient } = await import('@holdfast/core');
    const client = new LockClient(redis, { prefix: `bench-als-${process.pid}` });
    client.on('error', () => undefined);
    const lock = client.lock('unrelated');
    try {
      if (message.state === 'acquire') {
        for (let i = 0; i < 10; i++) await (await lock.acquire()).release();
        return { state: message.state, ...(await timed(message.iterations)) };
      }
      if (message.state === 'withLock') {
        for (let i = 0; i < 10; i++) await lock.withLock(() => undefined);
        return { state: message.state, ...(await timed(message.iterations)) };
      }
      const result = await lock.withLock(() => timed(message.iterations));
      return { state: message.state, ...result };
    } finally {
      await client.close();
    }
  } finally {
    redis.disconnect();
  }
}

process.once('message', (message: ToAsyncContextChild) => {
  run(message).then(
    (result) => process.send?.(result, () => process.exit(0)),
    (error: unknown) =>
      process.send?.(
        { state: message.state, wallMs: Number.NaN, cpuMs: Number.NaN, checksum: 0, error: String(error) },
        () => process.exit(1),
      ),
  );
});
