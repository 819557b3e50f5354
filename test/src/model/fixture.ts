import type { Redis } from 'ioredis';
import { sharedRedis } from '../shared-redis.js';
import { afterAll, beforeAll } from 'vitest';

/**
 * The connections a model program runs on: one ioredis client per
 * LockClient of the program (up to three) and one observer that reads the
 * server's state. Filled before the block's tests, closed after them.
 */
export function useModelRedis(): { clients: Redis[]; observer: Redis } {
  const redis = { clients: [] as Redis[], observer: undefined as unknown as Redis };
  beforeAll(async () => {
    const server = await sharedRedis();
    redis.clients = [server.client(), server.client(), server.client()];
    redis.observer = server.client();
  });
  afterAll(() => {
    for (const r of [...redis.clients, redis.observer]) r?.disconnect();
  });
  return redis;
}
