import { isHoldfastError } from '@holdfast/core';
import { lockFields, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { expectCounts, trackUnhandled, useServers } from '../helpers.js';

/**
 * The multi-instance scenarios of node-redlock (src/multi.test.ts) over three
 * real redis-server processes. "A client fails" there means foreign data at
 * the lock's key on that instance; holdfast never modifies such data, so the
 * instance simply does not grant.
 */
describe('ports of node-redlock (multi instance)', () => {
  const fx = useServers(3);
  const unhandled = trackUnhandled();
  afterEach(() => expect(unhandled).toEqual([]));

  /** Runs `command` on one instance through a short-lived admin client. */
  async function on<T>(server: RedisServer, command: (redis: ReturnType<RedisServer['client']>) => Promise<T>): Promise<T> {
    const admin = server.client({ maxRetriesPerRequest: 1 });
    try {
      return await command(admin);
    } finally {
      admin.disconnect();
    }
  }

  /** Hold count of the lock's single owner on each of `servers` ('' where there is no lock). */
  async function holdCounts(key: string, servers: RedisServer[]): Promise<string[]> {
    return Promise.all(
      servers.map(async (s) => {
        const hash = await on(s, (r) => lockFields(r, key));
        return Object.entries(hash)
          .filter(([field]) => !field.startsWith('@'))
          .map(([, count]) => count)
          .join();
      }),
    );
  }

  /** Remaining lease on each instance, as the original's "within 200 ms" check (a wide bound here). */
  async function expectTtls(key: string, leaseMs: number, which: number[]): Promise<void> {
    const pttls = await fx.pttls(key);
    for (const i of which) {
      expect(pttls[i]).toBeLessThanOrEqual(leaseMs);
      expect(pttls[i]).toBeGreaterThan(leaseMs - 60_000);
    }
  }

  it('acquires, extends and releases one lock on every instance (acquires, extends, and releases a single lock)', async () => {
    const lock = fx.redlock().lock(uniqueName('single'));
    const day = 86_400_000;
    const lease = await lock.acquire({ leaseMs: day });
    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    await expectTtls(lock.keys.lock, day, [0, 1, 2]);
    await lease.extend(3 * day);
    await waitFor(async () => (await fx.pttls(lock.keys.lock)).every((t) => t > day));
    await expectTtls(lock.keys.lock, 3 * day, [0, 1, 2]);
    await lease.release();
    await expectCounts(fx, lock.keys.lock, [null, null, null]);
  });

  it('foreign data on one instance: the other two grant, the data and its TTL stay as they were (succeeds when a minority of clients fail)', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const lock = fx.redlock().lock(uniqueName('minority'));
    const day = 86_400_000;
    await on(c, (r) => r.set(lock.keys.lock, 'other'));
    const lease = await lock.acquire({ leaseMs: day });
    await waitFor(async () => (await holdCounts(lock.keys.lock, [a, b])).join() === '1,1');
    await expectTtls(lock.keys.lock, day, [0, 1]);
    expect(await on(c, (r) => r.get(lock.keys.lock))).toBe('other');
    expect(await on(c, (r) => r.pttl(lock.keys.lock))).toBe(-1);
    await lease.extend(3 * day);
    await expectTtls(lock.keys.lock, 3 * day, [0, 1]);
    expect(await on(c, (r) => r.pttl(lock.keys.lock))).toBe(-1);
    await lease.release();
    await waitFor(async () => (await holdCounts(lock.keys.lock, [a, b])).join() === ',');
    expect(await on(c, (r) => r.get(lock.keys.lock))).toBe('other');
    await on(c, (r) => r.del(lock.keys.lock));
  });

  it('foreign data on two instances: no lease, nothing left on the third, the data untouched (fails when a majority of clients fail)', async () => {
    const [a, b, c] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const redlock = fx.redlock({ retries: 1, retryDelayMs: 20 });
    const lock = redlock.lock(uniqueName('majority'));
    await on(b, (r) => r.set(lock.keys.lock, 'other1'));
    await on(c, (r) => r.set(lock.keys.lock, 'other2'));
    const tried = await lock.tryAcquire().catch((e: unknown) => e);
    expect(tried === null || isHoldfastError(tried)).toBe(true);
    const waited = await lock.acquire({ waitMs: 300 }).catch((e: unknown) => e);
    expect(isHoldfastError(waited)).toBe(true);
    expect(redlock.heldCount).toBe(0);
    const { keys } = lock;
    await waitFor(async () => (await on(a, (r) => r.exists(keys.lock, keys.queue, keys.waiters))) === 0, {
      message: 'grant left on the free instance',
    });
    expect(await on(b, (r) => r.get(lock.keys.lock))).toBe('other1');
    expect(await on(c, (r) => r.get(lock.keys.lock))).toBe('other2');
    await Promise.all([b, c].map((s) => on(s, (r) => r.del(lock.keys.lock))));
  });

  it('Redlocks started side by side each take the lock in turn (the `using` helper is exclusive, over 3 instances)', async () => {
    const name = uniqueName('using');
    let inside = 0;
    let overlaps = 0;
    const tokens: number[] = [];
    await Promise.all(
      [fx.redlock(), fx.redlock()].map((redlock) =>
        redlock.lock(name).withLock(
          async (lease) => {
            if (++inside > 1) overlaps++;
            tokens.push(lease.token);
            await new Promise((resolve) => setTimeout(resolve, 100));
            await lease.extend();
            expect(lease.signal.aborted).toBe(false);
            inside--;
          },
          { leaseMs: 2_000, waitMs: 10_000 },
        ),
      ),
    );
    expect(overlaps).toBe(0);
    expect(new Set(tokens).size).toBe(2);
    await expectCounts(fx, fx.redlock().lock(name).keys.lock, [null, null, null]);
  });
});
