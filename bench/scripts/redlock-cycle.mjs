// One uncontended Redlock cycle (acquire, then release) on one lock, for the scripts that watch
// how V8 warms up to it: holdfast's Redlock or redlock@5, each with an ioredis client per port and
// defaults otherwise, a name of the process's own (the prefix keeps scripts apart).
import { Redis } from 'ioredis';

/**
 * Connects to every port and returns the cycle and how to disconnect.
 * @param {'holdfast' | 'redlock5'} lib
 * @param {readonly number[]} ports
 * @param {string} prefix
 * @returns {Promise<{ cycle: () => Promise<unknown>, close: () => void }>}
 */
export async function openRedlockCycle(lib, ports, prefix) {
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  await Promise.all(clients.map((redis) => redis.ping()));
  const close = () => {
    for (const redis of clients) redis.disconnect();
  };
  if (lib === 'holdfast') {
    const { Redlock } = await import('@holdfast/redlock');
    const redlock = new Redlock(clients, { prefix });
    redlock.on('error', () => undefined);
    const lock = redlock.lock(`${prefix}-${process.pid}`);
    return { cycle: async () => (await lock.acquire()).release(), close };
  }
  const { default: Redlock } = await import('redlock');
  const redlock = new Redlock(clients);
  redlock.on('error', () => undefined);
  const key = `${prefix}-r5-${process.pid}`;
  return { cycle: async () => (await redlock.acquire([key], 30_000)).release(), close };
}
