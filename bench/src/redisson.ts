import type { Redis } from 'ioredis';
import { Redisson } from 'node-redisson';
import { counted } from './command-counter.js';

interface RedissonInternals {
  commandExecutor: { redis: Redis; subscribeRedis: Redis };
}

/** node-redisson opens its own two connections from options; they are counted like any other. */
export function redissonConnections(redisson: Redisson): Redis[] {
  const executor = (redisson as unknown as RedissonInternals).commandExecutor;
  return [executor.redis, executor.subscribeRedis];
}

export function openRedisson(port: number, watchdogTimeoutMs?: number): Redisson {
  const redisson = new Redisson({
    redis: { options: { host: '127.0.0.1', port } },
    ...(watchdogTimeoutMs === undefined ? {} : { lockWatchdogTimeout: BigInt(watchdogTimeoutMs) }),
  });
  for (const connection of redissonConnections(redisson)) {
    counted(connection);
    connection.on('error', () => undefined);
  }
  return redisson;
}

