import { isDeepStrictEqual } from 'node:util';
import type { Redis, RedisOptions } from 'ioredis';
import { Redlock, type RedlockOptions } from '@holdfast/redlock';
import { lockFields, startRedisServers, waitFor, type RedisServer, type StartRedisOptions } from '@holdfast/test-utils';
import { afterAll, afterEach, beforeAll } from 'vitest';

/**
 * Per-describe fixture: N private redis-server processes (fault tests kill
 * and pause them, so they are never shared), Redlocks closed after each
 * test, servers stopped (and their clients disconnected) after the block.
 */
export function useServers(n: number, options: StartRedisOptions = {}) {
  let servers: RedisServer[] = [];
  const redlocks: Redlock[] = [];
  const prefix = `rl${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    servers = await startRedisServers(n, options);
  }, 60_000);
  afterEach(async () => {
    await Promise.all(redlocks.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  const fixture = {
    prefix,
    get servers(): RedisServer[] {
      return servers;
    },
    /** One client per server. */
    clients(redisOptions?: RedisOptions): Redis[] {
      return servers.map((s) => s.client(redisOptions));
    },
    redlock(redlockOptions: RedlockOptions = {}, clients: Redis[] = fixture.clients()): Redlock {
      // Generous per-instance bound: these machines run many servers and test
      // files at once. Tests about timing set their own.
      const redlock = new Redlock(clients, { prefix, instanceTimeoutMs: 250, ...redlockOptions });
      redlock.on('error', () => undefined);
      redlocks.push(redlock);
      return redlock;
    },
    /** PTTL of a key on each server. */
    async pttls(key: string): Promise<number[]> {
      return Promise.all(
        servers.map(async (s) => {
          const admin = s.client({ maxRetriesPerRequest: 1 });
          try {
            return await admin.pttl(key);
          } finally {
            admin.disconnect();
          }
        }),
      );
    },
    /** The lock on each server, in either layout: owner → hold count (bookkeeping fields dropped); null where absent. */
    async hashes(key: string): Promise<(Record<string, string> | null)[]> {
      return Promise.all(
        servers.map(async (s) => {
          const admin = s.client({ maxRetriesPerRequest: 1 });
          try {
            const hash = await lockFields(admin, key);
            // '@' fields carry the token, not a hold.
            const owners = Object.fromEntries(Object.entries(hash).filter(([field]) => !field.startsWith('@')));
            return Object.keys(hash).length === 0 ? null : owners;
          } finally {
            admin.disconnect();
          }
        }),
      );
    },
  };
  return fixture;
}

/**
 * Operations return at a majority; the other instances catch up a moment
 * later. Waits until every instance shows the expected hold counts (null: no key).
 */
export async function expectCounts(
  fx: { hashes(key: string): Promise<(Record<string, string> | null)[]> },
  key: string,
  expected: (string | null)[],
): Promise<void> {
  let last: unknown;
  await waitFor(
    async () => {
      const counts = (await fx.hashes(key)).map((h) => (h ? Object.values(h).join() : null));
      last = counts;
      return isDeepStrictEqual(counts, expected);
    },
    { timeoutMs: 5_000, message: () => `hold counts ${JSON.stringify(last)}, expected ${JSON.stringify(expected)}` },
  );
}

/** Keys under a prefix on one server, the per-slot fencing counters left out (they live forever by design). */
export async function lockKeysOn(server: RedisServer, prefix: string): Promise<string[]> {
  const admin = server.client({ maxRetriesPerRequest: 1 });
  try {
    const keys = await admin.keys(`${prefix}:*`);
    return keys.filter((k) => !k.endsWith(':fence')).sort();
  } finally {
    admin.disconnect();
  }
}

/** Resolves after `ms`, on a timer that does not keep the process alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Time a promise takes, in ms. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

/** Records process-level unhandled rejections for the duration of a describe block. */
export function trackUnhandled(): unknown[] {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  beforeAll(() => {
    process.on('unhandledRejection', listener);
  });
  afterAll(() => {
    process.off('unhandledRejection', listener);
  });
  return seen;
}
