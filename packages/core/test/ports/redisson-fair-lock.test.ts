import { LockClient, LockLostError, LockTimeoutError, type Lease, type Lock } from '@holdfast/core';
import { FaultProxy, startRedis, uniqueName, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * The scenarios of Redisson's RedissonFairLockTest. Every holdfast lock is
 * fair (a FIFO queue in Redis), so these run on the one Lock type. Waiters
 * are queued one at a time (each start waits for the queue to grow), which
 * makes the expected order a fact rather than a timing guess.
 */

/** Starts `acquire` on each lock in turn, each once the previous one is queued. */
async function enqueueInOrder(
  redis: Redis,
  locks: Lock[],
  options: { leaseMs?: number; waitMs: number },
  onAcquired: (index: number, lease: Lease) => Promise<void> | void,
): Promise<Promise<unknown>[]> {
  const waiting: Promise<unknown>[] = [];
  // Every waiter started so far is queued or has got the lock (a holder's lease may run out
  // meanwhile and shorten the queue): waiter `index` has its place once that count passes `index`.
  let granted = 0;
  for (const [index, lock] of locks.entries()) {
    waiting.push(
      lock.acquire(options).then((lease) => {
        granted++;
        return onAcquired(index, lease);
      }),
    );
    await waitFor(async () => (await redis.llen(lock.keys.queue)) + granted > index, { message: `waiter ${index} not queued` });
  }
  return waiting;
}

describe('ports of RedissonFairLockTest', () => {
  const fx = useRedis();

  it('holders that never release: each queued waiter gets the lock at expiry, in arrival order (testLeaseTimeout)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('lease-timeout');
    const first = await (await fx.client()).lock(name).acquire({ leaseMs: 300 });
    const locks = await Promise.all(Array.from({ length: 5 }, async () => (await fx.client()).lock(name)));
    const order: number[] = [];
    const waiting = await enqueueInOrder(redis, locks, { leaseMs: 300, waitMs: 15_000 }, (i) => void order.push(i));
    await Promise.all(waiting);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(first.isHeld).toBe(false);
  });

  it('clients queued one after another are served in that order (testConcurrency_MultiInstance_Ordering)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('ordering');
    const holder = await (await fx.client()).lock(name).acquire();
    const locks = await Promise.all(Array.from({ length: 6 }, async () => (await fx.client()).lock(name)));
    const order: number[] = [];
    let inside = 0;
    const waiting = await enqueueInOrder(redis, locks, { waitMs: 15_000 }, async (i, lease) => {
      expect(++inside).toBe(1);
      order.push(i);
      await delay(10);
      inside--;
      await lease.release();
    });
    await holder.release();
    await Promise.all(waiting);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('50 sibling tasks of one client all get the lock, one at a time (testMultipleLocks, testConcurrency_SingleInstance)', async () => {
    const locks = await fx.client();
    const lock = locks.lock(uniqueName('many-tasks'));
    let acquired = 0;
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 50 }, () =>
        lock.withLock(
          async () => {
            maxInside = Math.max(maxInside, ++inside);
            await delay(2);
            acquired++;
            inside--;
          },
          { leaseMs: 5_000, waitMs: 30_000 },
        ),
      ),
    );
    expect(acquired).toBe(50);
    expect(maxInside).toBe(1);
  });

  it('a held lock: tryAcquire null, a short wait times out; free again after release (testTryLockNonDelayed)', async () => {
    const name = uniqueName('non-delayed');
    const holder = await (await fx.client()).lock(name).tryAcquire();
    expect(holder).not.toBeNull();
    const other = (await fx.client()).lock(name);
    expect(await other.tryAcquire()).toBeNull();
    await expect(other.acquire({ waitMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    // A timed-out waiter withdraws from the queue in the background: wait until it has.
    const redis = await fx.redis();
    await waitFor(async () => (await redis.llen(other.keys.queue)) === 0 && (await redis.hlen(other.keys.waiters)) === 0);
    await holder!.release();
    const next = await other.tryAcquire();
    expect(next).not.toBeNull();
    await next!.release();
  });

  it('a lock left held by a closed client: waitMs runs out with LockTimeoutError (testTryLockWait)', async () => {
    const name = uniqueName('left-held');
    const gone = await fx.client();
    await gone.lock(name).acquire({ leaseMs: 10_000 });
    await gone.close();
    const lock = (await fx.client()).lock(name);
    const started = performance.now();
    await expect(lock.acquire({ waitMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(await lock.forceRelease()).toBe(true);
  });

  it('waiters that timed out leave the queue and delay nobody (testWaitTimeoutDrift, testAcquireFailedTimeoutDrift_Descrete)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('timeout-drift');
    const holder = await (await fx.client()).lock(name).acquire({ leaseMs: 30_000 });
    const quitters = await Promise.all(Array.from({ length: 3 }, async () => (await fx.client()).lock(name)));
    const results = await Promise.all(quitters.map((l) => l.acquire({ waitMs: 200, leaseMs: 30_000 }).catch((e: unknown) => e)));
    for (const r of results) expect(r).toBeInstanceOf(LockTimeoutError);
    const keys = quitters[0]!.keys;
    await waitFor(async () => (await redis.llen(keys.queue)) === 0 && (await redis.hlen(keys.waiters)) === 0, {
      message: 'timed-out waiters left in the queue',
    });
    const patient = (await fx.client()).lock(name).acquire({ waitMs: 10_000 });
    await waitFor(async () => (await redis.llen(keys.queue)) === 1);
    await holder.release();
    const lease = await patient;
    expect(lease.token).toBeGreaterThan(holder.token);
    await lease.release();
  });

  it('a queued waiter whose connection died costs the next one at most the hand-off reservation (testAbandonedTimeoutDrift_Descrete, testFirstThreadDeathTimeoutDrift)', async () => {
    const redis = await fx.redis();
    const server = await fx.server();
    const proxy = await FaultProxy.start({ host: server.host, port: server.port });
    try {
      const options = { handoffTimeoutMs: 300, commandTimeoutMs: 500 };
      const deadRedis = server.client({ port: proxy.port });
      deadRedis.on('error', () => undefined);
      await deadRedis.ping();
      const dead = await fx.client(options, deadRedis);
      dead.on('error', () => undefined); // its calls time out in the blackhole, as intended
      const name = uniqueName('abandoned');
      const holder = await (await fx.client(options)).lock(name).acquire();
      const keys = dead.lock(name).keys;
      const abandoned = dead.lock(name).acquire({ waitMs: 20_000 }).catch((e: unknown) => e);
      await waitFor(async () => (await redis.llen(keys.queue)) === 1);
      const live = (await fx.client(options)).lock(name).acquire({ waitMs: 10_000 });
      await waitFor(async () => (await redis.llen(keys.queue)) === 2);
      proxy.blackhole(true);
      await holder.release();
      const lease = await live;
      expect(lease.isHeld).toBe(true);
      await lease.release();
      await dead.close();
      expect(await abandoned).toBeInstanceOf(Error);
    } finally {
      await proxy.close();
    }
  });

  it('forceRelease hands the lock to the first queued waiter (testForceUnlock with waiters)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('force-fifo');
    const holder = await (await fx.client()).lock(name).acquire();
    const locks = await Promise.all(Array.from({ length: 2 }, async () => (await fx.client()).lock(name)));
    const order: number[] = [];
    const waiting = await enqueueInOrder(redis, locks, { waitMs: 10_000 }, async (i, lease) => {
      order.push(i);
      await lease.release();
    });
    expect(await (await fx.client()).lock(name).forceRelease()).toBe(true);
    await Promise.all(waiting);
    expect(order).toEqual([0, 1]);
    // Forced by another client: the holder learns it at its next call.
    await expect(holder.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(holder.isHeld).toBe(false);
  });

  it('a prefix separates lock spaces; every key lives under it (testNameMapper)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('mapped');
    const mapped = new LockClient(redis, { prefix: `${fx.prefix}-mapped` });
    try {
      const lease = await mapped.lock(name).acquire();
      expect(await mapped.lock(name).isLocked()).toBe(true);
      expect(await (await fx.client()).lock(name).isLocked()).toBe(false);
      const keys = await redis.keys(`${fx.prefix}-mapped:*`);
      expect(keys.some((k) => k.endsWith(`:l:${name}`))).toBe(true);
      await lease.release();
      expect(await mapped.lock(name).isLocked()).toBe(false);
    } finally {
      await mapped.close();
    }
  });

  it('writes paused on the server while a waiter waits: it still gets the lock, no error, queue empty (testAcquireFailedNotCalledOnRedisTimeout)', async () => {
    const server = await startRedis();
    try {
      const admin = server.client();
      const holderClient = new LockClient(server.client(), { prefix: 'paused' });
      const waiterClient = new LockClient(server.client(), { prefix: 'paused' });
      const lock = waiterClient.lock('p');
      const holder = await holderClient.lock('p').acquire({ leaseMs: 10_000 });
      const waiting = lock.acquire({ waitMs: 10_000, leaseMs: 1_000 });
      await waitFor(async () => (await admin.llen(lock.keys.queue)) === 1);
      await admin.call('CLIENT', 'PAUSE', '400', 'WRITE');
      await holder.release();
      const lease = await waiting;
      expect(lease.isHeld).toBe(true);
      await lease.release();
      expect(await admin.llen(lock.keys.queue)).toBe(0);
      await Promise.all([holderClient.close(), waiterClient.close()]);
    } finally {
      await server.stop();
    }
  });
});
