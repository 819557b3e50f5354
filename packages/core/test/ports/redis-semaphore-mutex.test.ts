import {
  InvalidArgumentError,
  LockClient,
  LockLostError,
  LockNotHeldError,
  LockTimeoutError,
  isHoldfastError,
  type LostEvent,
} from '@holdfast/core';
import { startRedis, uniqueName, waitFor } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * The scenarios of redis-semaphore's Mutex suites (RedisMutex.test.ts,
 * mutex/acquire, mutex/release, mutex/refresh, Lock.test.ts). Their refresh
 * timer is `lease.extend()` here (or @holdfast/watchdog); their onLockLost
 * callback is the `lost` event and `lease.signal`.
 */

/** Records process-level unhandled rejections while the block runs. */
function trackUnhandled(): unknown[] {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => seen.push(reason);
  beforeAll(() => void process.on('unhandledRejection', listener));
  afterAll(() => void process.off('unhandledRejection', listener));
  return seen;
}

describe('ports of redis-semaphore Mutex', () => {
  const fx = useRedis();
  const unhandled = trackUnhandled();

  it('rejects invalid arguments (should fail on invalid arguments)', async () => {
    expect(() => new LockClient(null as never)).toThrow(InvalidArgumentError);
    const locks = await fx.client();
    expect(() => locks.lock('')).toThrow(InvalidArgumentError);
    expect(() => locks.lock(1 as never)).toThrow(InvalidArgumentError);
  });

  it('acquires and releases: the key exists while held, gone after (should acquire and release lock)', async () => {
    const redis = await fx.redis();
    const lock = (await fx.client()).lock(uniqueName('basic'));
    const lease = await lock.acquire();
    expect(lease.isHeld).toBe(true);
    expect(await redis.exists(lock.keys.lock)).toBe(1);
    await lease.release();
    expect(lease.isHeld).toBe(false);
    expect(await redis.exists(lock.keys.lock)).toBe(0);
  });

  it('the key carries the lease as its TTL (should set TTL for key)', async () => {
    const redis = await fx.redis();
    const lock = (await fx.client()).lock(uniqueName('ttl'));
    const lease = await lock.acquire({ leaseMs: 1_000 });
    const pttl = await redis.pttl(lock.keys.lock);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(1_000);
    await lease.release();
  });

  it('a second owner times out; the first release leaves no key (should reject after timeout)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('timeout');
    const first = (await fx.client()).lock(name);
    const lease = await first.acquire({ leaseMs: 5_000 });
    await expect((await fx.client()).lock(name).acquire({ waitMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    // The timed-out waiter leaves the queue in the background; a release before that would hand it the lock.
    await waitFor(async () => (await redis.llen(first.keys.queue)) === 0 && (await redis.hlen(first.keys.waiters)) === 0);
    await lease.release();
    expect(await redis.exists(first.keys.lock)).toBe(0);
  });

  it('an aborted signal ends the wait with its reason (should abort when the given signal is aborted)', async () => {
    const name = uniqueName('abort');
    const lease = await (await fx.client()).lock(name).acquire();
    const signal = AbortSignal.timeout(10);
    const error = await (await fx.client()).lock(name).acquire({ signal }).catch((e: unknown) => e);
    expect(error).toBe(signal.reason);
    expect((error as Error).name).toBe('TimeoutError');
    await lease.release();
  });

  it('tryAcquire: null when held, a lease when free (should return false/true for tryAcquire)', async () => {
    const name = uniqueName('try');
    const lease = await (await fx.client()).lock(name).acquire();
    const other = (await fx.client()).lock(name);
    expect(await other.tryAcquire()).toBeNull();
    await lease.release();
    const got = await other.tryAcquire();
    expect(got).not.toBeNull();
    await got!.release();
  });

  it('extending keeps the lock past its first lease until release (should refresh lock every refreshInterval ms until release)', async () => {
    const redis = await fx.redis();
    const lock = (await fx.client()).lock(uniqueName('refresh'));
    const lease = await lock.acquire({ leaseMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      await delay(250);
      await lease.extend();
    }
    expect(lease.isHeld).toBe(true);
    expect(await redis.exists(lock.keys.lock)).toBe(1);
    await lease.release();
    expect(await redis.exists(lock.keys.lock)).toBe(0);
  });

  it('without extension the key expires and the lease is reported lost (should stop refreshing if stopped)', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const lock = locks.lock(uniqueName('no-refresh'));
    const lease = await lock.acquire({ leaseMs: 300 });
    await waitFor(async () => (await redis.exists(lock.keys.lock)) === 0, { timeoutMs: 5_000 });
    expect(lease.isHeld).toBe(false);
    expect(lost.map((e) => e.reason)).toEqual(['expired']);
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
  });

  it('foreign data written over a held lock: lost (taken), foreign data untouched (lost lock case: another instance acquired)', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const lock = locks.lock(uniqueName('taken'));
    const lease = await lock.acquire({ leaseMs: 5_000 });
    await redis.set(lock.keys.lock, '222');
    await expect(lease.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(lease.isHeld).toBe(false);
    expect(lease.signal.aborted).toBe(true);
    expect(lost.map((e) => e.reason)).toEqual(['taken']);
    await expect(lease.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await redis.get(lock.keys.lock)).toBe('222');
    await redis.del(lock.keys.lock);
  });

  it('foreign data at a free lock key: acquire refuses with KeyConflictError and modifies nothing', async () => {
    const redis = await fx.redis();
    const lock = (await fx.client()).lock(uniqueName('conflict'));
    await redis.set(lock.keys.lock, '222', 'PX', 60_000);
    const error = await lock.acquire({ waitMs: 200 }).catch((e: unknown) => e);
    expect(isHoldfastError(error) && error.code).toBe('ERR_KEY_CONFLICT');
    expect(await redis.get(lock.keys.lock)).toBe('222');
    expect(await redis.pttl(lock.keys.lock)).toBeGreaterThan(50_000);
    await redis.del(lock.keys.lock);
  });

  it('the key deleted under a held lease: lost (deleted) (lost lock case: lock expired)', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const lost: string[] = [];
    locks.on('lost', (e) => lost.push(e.reason));
    const lock = locks.lock(uniqueName('deleted'));
    const lease = await lock.acquire({ leaseMs: 5_000 });
    await redis.del(lock.keys.lock);
    await expect(lease.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(lost).toEqual(['deleted']);
    expect(lease.signal.aborted).toBe(true);
  });

  it('one Lock object over three lifecycles, tokens increasing (should be reusable)', async () => {
    const redis = await fx.redis();
    const lock = (await fx.client()).lock(uniqueName('reusable'));
    let last = 0;
    for (let i = 0; i < 3; i++) {
      const lease = await lock.acquire({ leaseMs: 300 });
      expect(lease.token).toBeGreaterThan(last);
      last = lease.token;
      expect(await redis.exists(lock.keys.lock)).toBe(1);
      await lease.release();
      expect(await redis.exists(lock.keys.lock)).toBe(0);
    }
  });

  it('a waiter gets the lock only once the unreleased lease has expired (should wait for auto-release)', async () => {
    const name = uniqueName('auto-release');
    const first = await (await fx.client()).lock(name).acquire({ leaseMs: 300 });
    const second = await (await fx.client()).lock(name).acquire({ leaseMs: 300, waitMs: 5_000 });
    expect(first.isHeld).toBe(false);
    expect(second.token).toBeGreaterThan(first.token);
    await second.release();
  });

  it('locks of different names never wait for each other (should wait per key)', async () => {
    const locks = await fx.client();
    const [a, b] = [uniqueName('key1'), uniqueName('key2')];
    const held = await Promise.all([locks.lock(a).acquire(), locks.lock(b).acquire()]);
    expect(held.every((l) => l.isHeld)).toBe(true);
    const other = await fx.client();
    expect(await other.lock(a).tryAcquire()).toBeNull();
    const third = await other.lock(uniqueName('key3')).tryAcquire();
    expect(third).not.toBeNull();
    await Promise.all([...held, third!].map((l) => l.release()));
  });

  it('releasing a free lock changes nothing; a second release throws (should do nothing if resource is not locked)', async () => {
    const lock = (await fx.client()).lock(uniqueName('free'));
    expect(await lock.forceRelease()).toBe(false);
    const lease = await lock.acquire();
    await lease.release();
    await expect(lease.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await lock.isLocked()).toBe(false);
  });

  it('extend resets the TTL while held; refused, harmlessly, once another owner holds the lock (mutex refresh)', async () => {
    const name = uniqueName('refresh-owner');
    const lock = (await fx.client()).lock(name);
    const lease = await lock.acquire({ leaseMs: 1_000 });
    await lease.extend(20_000);
    expect(await lock.remainingTtlMs()).toBeGreaterThan(10_000);
    await lease.release();
    const expired = await lock.acquire({ leaseMs: 300 });
    const next = await (await fx.client()).lock(name).acquire({ waitMs: 5_000, leaseMs: 5_000 });
    await expect(expired.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(next.isHeld).toBe(true);
    expect(await lock.currentToken()).toBe(next.token);
    await next.release();
  });

  it('an extend in flight while the lease is released raises no lost error (Lock: refresh and release race)', async () => {
    const locks = await fx.client();
    const lost: unknown[] = [];
    locks.on('lost', (e) => lost.push(e));
    const lease = await locks.lock(uniqueName('race')).acquire({ leaseMs: 1_000 });
    const extending = lease.extend().catch((e: unknown) => e);
    await lease.release();
    const outcome = await extending;
    expect(outcome === undefined || outcome instanceof LockNotHeldError || outcome instanceof LockLostError).toBe(true);
    await delay(50);
    expect(lost).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('Redis down past the lease: the holder is told lost, a second owner gets the lock after restart ([Node shutdown])', async () => {
    const server = await startRedis();
    try {
      const redis = server.client({ retryStrategy: () => 50 });
      redis.on('error', () => undefined);
      const a = new LockClient(redis, { prefix: 'down', commandTimeoutMs: 300 });
      const lost: string[] = [];
      a.on('lost', (e) => lost.push(e.reason));
      a.on('error', () => undefined);
      const lease = await a.lock('k').acquire({ leaseMs: 500 });
      await server.kill();
      await delay(800);
      await server.restart();
      expect(lease.isHeld).toBe(false);
      expect(lost).toEqual(['expired']);
      const b = new LockClient(server.client(), { prefix: 'down' });
      const next = await b.lock('k').acquire({ waitMs: 5_000 });
      expect(next.isHeld).toBe(true);
      await next.release();
      await Promise.all([a.close(), b.close()]);
      redis.disconnect();
    } finally {
      await server.stop();
    }
  });
});
