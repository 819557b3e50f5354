import { ClientClosedError, LockNotHeldError, LockTimeoutError, isHoldfastError, type LostEvent } from '@holdfast/core';
import { startRedis, uniqueName, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * The scenarios of Redisson's RedissonLockTest, on holdfast's API. A Java
 * thread is an async task here; re-entry goes through withLock (see the
 * "Ports of the peers' suites" section of test/README.md for the differences).
 */

/** A read-modify-write across an await: concurrent holders would lose increments. */
async function unsafeIncrement(redis: Redis, key: string): Promise<void> {
  const value = Number((await redis.get(key)) ?? 0);
  await delay(1);
  await redis.set(key, String(value + 1));
}

describe('ports of RedissonLockTest', () => {
  const fx = useRedis();

  it('lock, unlock, lock again (testLockUnlock)', async () => {
    const lock = (await fx.client()).lock(uniqueName('lock-unlock'));
    for (let i = 0; i < 2; i++) {
      const lease = await lock.acquire();
      expect(lease.isHeld).toBe(true);
      await lease.release();
      expect(lease.isHeld).toBe(false);
    }
    expect(await lock.isLocked()).toBe(false);
  });

  it('isLocked seen from another client (testIsLocked, testIsLockedOtherThread)', async () => {
    const name = uniqueName('is-locked');
    const lock = (await fx.client()).lock(name);
    const observer = (await fx.client()).lock(name);
    expect(await observer.isLocked()).toBe(false);
    const lease = await lock.acquire();
    expect(await lock.isLocked()).toBe(true);
    expect(await observer.isLocked()).toBe(true);
    await lease.release();
    expect(await observer.isLocked()).toBe(false);
  });

  it('forceRelease frees a held lock and tells the holder (testForceUnlock)', async () => {
    const locks = await fx.client();
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const name = uniqueName('force');
    const lease = await locks.lock(name).acquire();
    expect(await locks.lock(name).forceRelease()).toBe(true);
    expect(await locks.lock(name).isLocked()).toBe(false);
    expect(await (await fx.client()).lock(name).isLocked()).toBe(false);
    expect(lost.map((e) => e.reason)).toEqual(['deleted']);
    expect(lease.isHeld).toBe(false);
    expect(lease.signal.aborted).toBe(true);
    expect(await locks.lock(name).forceRelease()).toBe(false);
  });

  it('remaining TTL follows the lease, 0 once free (testRemainTimeToLive)', async () => {
    const locks = await fx.client({ leaseMs: 20_000 });
    const lock = locks.lock(uniqueName('ttl'));
    const hour = 3_600_000;
    const long = await lock.acquire({ leaseMs: hour });
    const ttl = await lock.remainingTtlMs();
    expect(ttl).toBeLessThanOrEqual(hour);
    expect(ttl).toBeGreaterThan(hour - 60_000);
    await long.release();
    expect(await lock.remainingTtlMs()).toBe(0);
    const byDefault = await lock.acquire();
    const defaultTtl = await lock.remainingTtlMs();
    expect(defaultTtl).toBeLessThanOrEqual(20_000);
    expect(defaultTtl).toBeGreaterThan(10_000);
    await byDefault.release();
  });

  it('re-entries keep the lease; partial releases keep the lock (testRemainTimeToLive2, testGetHoldCount)', async () => {
    const locks = await fx.client();
    const released: number[] = [];
    locks.on('released', (e) => released.push(e.holdCount));
    const lock = locks.lock(uniqueName('hold-count'));
    await lock.withLock(
      async (outer) => {
        expect(outer.holdCount).toBe(1);
        await lock.withLock(async (second) => {
          expect(second.holdCount).toBe(2);
          const third = await lock.acquire({ leaseMs: 10_000 });
          expect(third.holdCount).toBe(3);
          expect(third.token).toBe(outer.token);
          await third.release();
        }, { leaseMs: 10_000 });
        expect(released).toEqual([2, 1]);
        const ttl = await lock.remainingTtlMs();
        expect(ttl).toBeGreaterThan(5_000);
        expect(ttl).toBeLessThanOrEqual(10_000);
      },
      { leaseMs: 10_000 },
    );
    expect(released).toEqual([2, 1, 0]);
    expect(await lock.isLocked()).toBe(false);
  });

  it('re-entry inside withLock; another owner is refused meanwhile (testReentrancy)', async () => {
    const locks = await fx.client();
    const name = uniqueName('reentrancy');
    const lock = locks.lock(name);
    await lock.withLock(async (outer) => {
      const again = await lock.tryAcquire();
      expect(again?.holdCount).toBe(2);
      expect(again?.token).toBe(outer.token);
      await again!.release();
      expect(await (await fx.client()).lock(name).tryAcquire()).toBeNull();
    });
    expect(await lock.isLocked()).toBe(false);
  });

  it('a second bare tryAcquire is a new owner, refused while the first holds (testReentrancy, bare form)', async () => {
    const lock = (await fx.client()).lock(uniqueName('bare-twice'));
    const first = await lock.tryAcquire();
    expect(first).not.toBeNull();
    expect(await lock.tryAcquire()).toBeNull();
    await first!.release();
    expect(await lock.isLocked()).toBe(false);
  });

  it('lease.isHeld is per holder (testIsHeldByCurrentThread, testIsHeldByCurrentThreadOtherThread)', async () => {
    const name = uniqueName('held');
    const mine = await (await fx.client()).lock(name).acquire();
    expect(mine.isHeld).toBe(true);
    expect(await (await fx.client()).lock(name).tryAcquire()).toBeNull();
    await mine.release();
    expect(mine.isHeld).toBe(false);
  });

  it('an expired lease passes to the waiter; its late release throws and frees nothing (testExpire, testUnlockFail)', async () => {
    const name = uniqueName('expire');
    const first = await (await fx.client()).lock(name).acquire({ leaseMs: 500 });
    const second = await (await fx.client()).lock(name).acquire({ waitMs: 10_000, leaseMs: 10_000 });
    expect(first.isHeld).toBe(false);
    expect(second.token).toBeGreaterThan(first.token);
    await expect(first.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(second.isHeld).toBe(true);
    expect(await (await fx.client()).lock(name).currentToken()).toBe(second.token);
    await second.release();
  });

  it('a holder whose client closes without release keeps the lock until its TTL (testAutoExpire)', async () => {
    const name = uniqueName('auto-expire');
    const crashed = await fx.client();
    const lost: string[] = [];
    crashed.on('lost', (e) => lost.push(e.reason));
    const lease = await crashed.lock(name).acquire({ leaseMs: 2_000 });
    await crashed.close();
    expect(lease.isHeld).toBe(false);
    expect(lease.signal.reason).toBeInstanceOf(ClientClosedError);
    expect(lost).toEqual(['closed']);
    await expect(lease.release()).rejects.toBeInstanceOf(ClientClosedError);
    const other = (await fx.client()).lock(name);
    expect(await other.tryAcquire()).toBeNull();
    await waitFor(async () => !(await other.isLocked()), { timeoutMs: 5_000 });
    const next = await other.acquire({ waitMs: 5_000 });
    expect(next.token).toBeGreaterThan(lease.token);
    await next.release();
  });

  it('a wait on a held lock ends with LockTimeoutError after waitMs (testTryLockWait)', async () => {
    const name = uniqueName('try-wait');
    const lease = await (await fx.client()).lock(name).acquire();
    const started = performance.now();
    const error = await (await fx.client()).lock(name).acquire({ waitMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    await lease.release();
  });

  it('a waiter without a signal waits until the holder releases (testLockUninterruptibly)', async () => {
    const name = uniqueName('uninterruptible');
    const holder = await (await fx.client()).lock(name).acquire();
    let got = false;
    const waiting = (await fx.client()).lock(name).acquire().then((l) => ((got = true), l));
    await delay(200);
    expect(got).toBe(false);
    await holder.release();
    await (await waiting).release();
  });

  it('an acquire aborted while in flight leaves no lock behind (testLockIsNotRenewedAfterInterruptedTryLock)', async () => {
    const locks = await fx.client({ handoffTimeoutMs: 300 });
    const lock = locks.lock(uniqueName('aborted'));
    const controller = new AbortController();
    const attempt = lock.acquire({ signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error('interrupted'));
    const outcome = await attempt;
    if (outcome instanceof Error) expect(outcome.message).toBe('interrupted');
    else await (outcome as { release(): Promise<void> }).release();
    await waitFor(async () => !(await lock.isLocked()), { timeoutMs: 5_000 });
    expect(locks.heldCount).toBe(0);
  });

  it('15 sibling tasks on one client: exclusive, counter exact (testConcurrency_SingleInstance)', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const name = uniqueName('single-instance');
    const counter = `${fx.prefix}:${name}:counter`;
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 15 }, async () => {
        const lease = await locks.lock(name).acquire({ waitMs: 20_000 });
        maxInside = Math.max(maxInside, ++inside);
        await unsafeIncrement(redis, counter);
        inside--;
        await lease.release();
      }),
    );
    expect(maxInside).toBe(1);
    expect(await redis.get(counter)).toBe('15');
  });

  it('many clients, one section each, and 4 clients × 10 sections (testConcurrency_MultiInstance, testConcurrencyLoop_MultiInstance)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('multi-instance');
    const counter = `${fx.prefix}:${name}:counter`;
    const clients = await Promise.all(Array.from({ length: 20 }, () => fx.client()));
    await Promise.all(clients.map((c) => c.lock(name).withLock(() => unsafeIncrement(redis, counter), { waitMs: 20_000 })));
    expect(await redis.get(counter)).toBe('20');
    await Promise.all(
      clients.slice(0, 4).map(async (c) => {
        for (let i = 0; i < 10; i++) {
          await c.lock(name).withLock(() => unsafeIncrement(redis, counter), { waitMs: 20_000 });
        }
      }),
    );
    expect(await redis.get(counter)).toBe('60');
  });

  it('tryAcquire/release loops from 8 tasks: every success exclusive, nothing left (testConcurrencyTryLockUnLock)', async () => {
    const locks = await fx.client();
    const lock = locks.lock(uniqueName('try-loop'));
    let inside = 0;
    let overlaps = 0;
    let successes = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let k = 0; k < 40; k++) {
          const lease = await lock.tryAcquire();
          if (!lease) continue;
          successes++;
          if (++inside > 1) overlaps++;
          await delay(0);
          inside--;
          await lease.release();
        }
      }),
    );
    expect(overlaps).toBe(0);
    expect(successes).toBeGreaterThan(0);
    expect(locks.heldCount).toBe(0);
    expect(await lock.isLocked()).toBe(false);
  });

  it('200 tasks over 5 locks on one client: no error, no subscription left (testSubscriptionsPerConnection, testSinglePubSub)', async () => {
    const locks = await fx.client({ subscriptionLingerMs: 0 });
    const redis = await fx.redis();
    const base = uniqueName('subs');
    // One short wait first, so the client's subscriber connection has finished its
    // handshake: ioredis 5.9 loses an SSUBSCRIBE sent between its TCP connect and
    // its ready check (the check then fails and the connection is remade).
    const warm = await locks.lock(`${base}-warm`).acquire({ leaseMs: 300 });
    await (await locks.lock(`${base}-warm`).acquire({ leaseMs: 300, waitMs: 5_000 })).release();
    expect(warm.isHeld).toBe(false);
    let ops = 0;
    const errors: unknown[] = [];
    await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        try {
          const lease = await locks.lock(`${base}-${i % 5}`).acquire({ waitMs: 30_000 });
          await delay(i % 4);
          await lease.release();
          ops++;
        } catch (error) {
          errors.push(error);
        }
      }),
    );
    expect(errors).toEqual([]);
    expect(ops).toBe(200);
    await waitFor(async () => {
      const sharded = (await redis.call('PUBSUB', 'SHARDCHANNELS', `${fx.prefix}:*`)) as string[];
      const classic = await redis.pubsub('CHANNELS', `${fx.prefix}:*`);
      return sharded.length + (classic as string[]).length === 0;
    }, { timeoutMs: 5_000, message: 'lock channels still subscribed' });
  }, 60_000);

  it('a dead Redis makes tryAcquire fail with a holdfast error, in bounded time (testRedisFailed)', async () => {
    const server = await startRedis();
    const redis = server.client({ maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    redis.on('error', () => undefined);
    const locks = await fx.client({ commandTimeoutMs: 300, retries: 1 }, redis);
    locks.on('error', () => undefined); // the failed attempt's background clean-up cannot reach Redis either
    await server.kill();
    const error = await locks.lock(uniqueName('dead')).tryAcquire().catch((e: unknown) => e);
    expect(isHoldfastError(error)).toBe(true);
    expect(['ERR_REDIS_TIMEOUT', 'ERR_REDIS']).toContain((error as { code: string }).code);
    await locks.close();
    redis.disconnect();
    await server.stop();
  });
});
