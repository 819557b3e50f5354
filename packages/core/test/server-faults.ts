import { LockClient, type LockClientOptions, type LostEvent, type RenewalHold } from '@holdfast/core';
import type { RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import type { Redis } from 'ioredis';
import { expect } from 'vitest';
import { delay } from './helpers.js';
import { useOwnServer } from './own-server.js';

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
  const errors: unknown[] = [];
  let counter = 0;
  const own = useOwnServer({
    persistent: options.persistent ?? false,
    beforeCleanup: () => own.server.resume(),
    afterCleanup: () => expect(errors.splice(0)).toEqual([]),
  });

  const fixture = {
    get server(): RedisServer {
      return own.server;
    },
    /** A fresh prefix per test, so a test never sees another's keys or fencing counters. */
    prefix(): string {
      return `sf${++counter}`;
    },
    /** An ioredis client that reconnects quickly once the server is back. */
    redis(): Redis {
      const redis = fixture.server.client({ retryStrategy: () => 20 });
      redis.on('error', () => undefined);
      own.onCleanup(() => redis.disconnect());
      return redis;
    },
    /** A lock client on its own connection; `watchdog` renews the leases that name no `leaseMs`. */
    locks(prefix: string, clientOptions: LockClientOptions = {}, watchdog?: { timeoutMs: number }) {
      const locks = new LockClient(fixture.redis(), { prefix, ...clientOptions });
      // Background failures while the server is down are expected; what a test asserts is the leases' fate.
      locks.on('error', () => undefined);
      own.onCleanup(() => locks.close());
      let dog: Watchdog | undefined;
      if (watchdog) {
        dog = new Watchdog(locks, watchdog);
        dog.on('error', (error) => errors.push(error));
        own.onCleanup(() => dog!.stop());
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

/**
 * Stops the server (SIGSTOP), then, at each of `expiries` (the holders' server expiries, wall-clock
 * ms, read just before), checks that no more of `leases` are believed held than the server still
 * holds: a lease is lost before (or at) the moment the server drops it, whatever the load.
 */
export async function pauseThroughExpiries(server: RedisServer, leases: readonly { signal: AbortSignal }[], expiries: readonly number[]): Promise<void> {
  server.pause();
  expect(expiries).toHaveLength(leases.length);
  for (const at of [...expiries].sort((a, b) => a - b)) {
    await untilWallClock(at);
    const believed = leases.filter((lease) => !lease.signal.aborted).length;
    expect(believed).toBeLessThanOrEqual(expiries.filter((e) => e > Date.now()).length);
  }
}

/** The `lost` events `locks` emits from now on. */
export function recordLost(locks: LockClient): LostEvent[] {
  const lost: LostEvent[] = [];
  locks.on('lost', (event) => lost.push(event));
  return lost;
}
