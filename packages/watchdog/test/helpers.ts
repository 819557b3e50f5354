import { LockClient, type LockClientOptions, type RenewalHold } from '@holdfast/core';
import { commandStats, startRedis, type RedisServer } from '@holdfast/test-utils';
import type { Redis, RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { Watchdog, type WatchdogOptions } from '@holdfast/watchdog';

/** Resolves after `ms`, on a timer that does not keep the process alive. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Counts the renewal calls a client makes, so Redis counters can be read between ticks. */
export interface RenewSpy {
  /** renewHolds() calls started. */
  readonly calls: number;
  /** renewHolds() calls not yet settled. */
  readonly inFlight: number;
  /** Names sent by each call, in order, with the time it was made. */
  readonly sent: { at: number; names: string[] }[];
}

export function spyOnRenewals(client: LockClient): RenewSpy {
  const spy = { calls: 0, inFlight: 0, sent: [] as { at: number; names: string[] }[] };
  const original = client.renewHolds.bind(client);
  client.renewHolds = (holds: readonly RenewalHold[]) => {
    spy.calls++;
    spy.inFlight++;
    spy.sent.push({ at: performance.now(), names: holds.map((h) => h.name) });
    return original(holds).finally(() => spy.inFlight--);
  };
  return spy;
}

/**
 * INFO commandstats taken strictly between two ticks: no renewal in flight
 * when it is sent, and none started before its reply came back.
 */
export async function statsBetweenTicks(admin: Redis, spy: RenewSpy): Promise<{ stats: Record<string, number>; calls: number }> {
  for (;;) {
    const calls = spy.calls;
    if (spy.inFlight === 0) {
      const stats = await commandStats(admin);
      if (spy.calls === calls && spy.inFlight === 0) return { stats, calls };
    }
    await delay(5);
  }
}

/**
 * Per-file fixture on a dedicated redis-server (command counters and faults
 * must not be shared with other files): clients, lock clients and watchdogs
 * made through it are closed after each test, and no test may leave an
 * unhandled rejection behind.
 */
export function useWatchdogFixture() {
  let server: RedisServer | undefined;
  const cleanup: (() => unknown)[] = [];
  const unhandled: unknown[] = [];
  const errors: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  let counter = 0;

  beforeAll(async () => {
    server = await startRedis();
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn();
    expect(unhandled.splice(0)).toEqual([]);
    expect(errors.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await server?.stop();
  });

  const fixture = {
    get server(): RedisServer {
      if (!server) throw new Error('the fixture server is not started yet');
      return server;
    },
    unhandled,
    /** What the watchdogs emitted as `error`; must be empty after each test unless emptied by it. */
    errors,
    redis(options?: RedisOptions): Redis {
      const redis = fixture.server.client(options);
      cleanup.push(() => redis.disconnect());
      return redis;
    },
    locks(options: LockClientOptions = {}, redis?: Redis): LockClient {
      const client = new LockClient(redis ?? fixture.redis(), { prefix: `wd${++counter}`, ...options });
      cleanup.push(() => client.close());
      return client;
    },
    watchdog(locks: LockClient, options: WatchdogOptions): Watchdog {
      const dog = new Watchdog(locks, options);
      dog.on('error', (error) => errors.push(error));
      cleanup.push(() => dog.stop());
      return dog;
    },
    /** A second client, without watchdog, on its own connection. */
    rival(prefix: string): LockClient {
      return fixture.locks({ prefix });
    },
    defer(fn: () => unknown): void {
      cleanup.push(fn);
    },
  };
  return fixture;
}
