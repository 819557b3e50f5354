import type { Redis } from 'ioredis';
import { LockClient, type LockClientOptions } from '@holdfast/core';
import { sharedRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, afterEach } from 'vitest';

/**
 * Per-file fixture: one real Redis (the harness's shared backend), clients
 * made through it closed after each test, and a unique prefix per test file
 * so files running in parallel never see each other's keys.
 */
export function useRedis() {
  const made: { clients: LockClient[]; redis: Redis[] } = { clients: [], redis: [] };
  let server: RedisServer | undefined;
  const prefix = `t${Math.random().toString(36).slice(2, 8)}`;

  const fixture = {
    prefix,
    async server(): Promise<RedisServer> {
      server ??= await sharedRedis();
      return server;
    },
    async redis(): Promise<Redis> {
      const r = (await fixture.server()).client();
      made.redis.push(r);
      return r;
    },
    async client(options: LockClientOptions = {}, redis?: Redis): Promise<LockClient> {
      const c = new LockClient(redis ?? (await fixture.redis()), { prefix, ...options });
      made.clients.push(c);
      return c;
    },
  };

  afterEach(async () => {
    await Promise.all(made.clients.splice(0).map((c) => c.close()));
  });
  afterAll(async () => {
    for (const r of made.redis.splice(0)) r.disconnect();
  });
  return fixture;
}

/** Resolves after `ms`, on a timer that does not keep the process alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Resolves once at least `count` waiters are queued at `queueKey`: what a test means by "the
 * waiter has queued", awaited on the key instead of a sleep that it probably has.
 */
export async function queued(redis: Redis, queueKey: string, count = 1): Promise<void> {
  await waitFor(async () => (await redis.llen(queueKey)) >= count, { timeoutMs: 10_000 });
}
