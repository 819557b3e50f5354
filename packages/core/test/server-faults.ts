import { LockClient, type LockClientOptions, type RenewalHold } from '@holdfast/core';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { delay } from './helpers.js';

/** Counts a client's renewal calls, so Redis can be read strictly between two watchdog ticks. */
export interface RenewalSpy {
  /** renewHolds() calls started. */
  readonly calls: number;
  /** renewHolds() calls not settled yet. */
  readonly inFlight: number;
}

/**
 * Per-file fixture for server faults (SIGSTOP, SIGKILL + restart): a redis-server of the file's
 * own, lock clients (with or without a watchdog) closed after each test, the server resumed and
 * running again after each test, and no unhandled rejection or `error` event left behind.
 */
export function useServerFaults(options: { persistent?: boolean } = {}) {
  let server: RedisServer | undefined;
  const cleanup: (() => unknown)[] = [];
  const unhandled: unknown[] = [];
  const errors: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  let counter = 0;

  beforeAll(async () => {
    server = await startRedis({ persistent: options.persistent ?? false });
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    server!.resume();
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
    /** A fresh prefix per test, so a test never sees another's keys or fencing counters. */
    prefix(): string {
      return `sf${++counter}`;
    },
    /** An ioredis client that reconnects quickly once the server is back. */
    redis(): Redis {
      const redis = fixture.server.client({ retryStrategy: () => 20 });
      redis.on('error', () => undefined);
      cleanup.push(() => redis.disconnect());
      return redis;
    },
    /** A lock client on its own connection; `watchdog` renews the leases that name no `leaseMs`. */
    locks(prefix: string, clientOptions: LockClientOptions = {}, watchdog?: { timeoutMs: number }) {
      const locks = new LockClient(fixture.redis(), { prefix, ...clientOptions });
      // Background failures while the server is down are expected; what a test asserts is the leases' fate.
      locks.on('error', () => undefined);
      cleanup.push(() => locks.close());
      let dog: Watchdog | undefined;
      if (watchdog) {
        dog = new Watchdog(locks, watchdog);
        dog.on('error', (error) => errors.push(error));
        cleanup.push(() => dog!.stop());
      }
      return { locks, dog, spy: spyOnRenewals(locks) };
    },
  };
  return fixture;
}

function spyOnRenewals(client: LockClient): RenewalSpy {
  const spy = { calls: 0, inFlight: 0 };
  const original = client.renewHolds.bind(client);
  client.renewHolds = (holds: readonly RenewalHold[]) => {
    spy.calls++;
    spy.inFlight++;
    return original(holds).finally(() => spy.inFlight--);
  };
  return spy;
}

/**
 * Runs `read` against Redis strictly between two renewal ticks (none in flight when it is sent,
 * none started before its reply), so what it reads is what the server holds when the caller
 * acts right after it, in the same turn of the event loop.
 */
export async function betweenTicks<T>(spy: RenewalSpy, read: () => Promise<T>): Promise<T> {
  for (;;) {
    const calls = spy.calls;
    if (spy.inFlight === 0) {
      const value = await read();
      if (spy.calls === calls && spy.inFlight === 0) return value;
    }
    await delay(5);
  }
}

/** Resolves once the wall clock (the clock Redis's TIME and key expiry use) has reached `unixMs`. */
export async function untilWallClock(unixMs: number): Promise<void> {
  while (Date.now() < unixMs) await delay(Math.max(1, unixMs - Date.now()));
}
