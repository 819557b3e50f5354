import { InvalidArgumentError, LockClient, LockTimeoutError, isHoldfastError } from '@holdfast/core';
import { clientMode, uniqueName } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * The single-instance scenarios of node-redlock (src/single.test.ts) on one
 * Redis through @holdfast/core. Its multi-instance scenarios are in
 * packages/redlock/test/ports; multi-resource locks have no counterpart.
 */
describe('ports of node-redlock (single instance)', () => {
  const fx = useRedis();

  it('refuses a lease that is not a positive integer of ms, or beyond the cap (refuses to use a non-integer duration)', async () => {
    const lock = (await fx.client()).lock(uniqueName('float'));
    await expect(lock.acquire({ leaseMs: Number.MAX_SAFE_INTEGER / 10 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.acquire({ leaseMs: 1.5 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.acquire({ leaseMs: Math.floor(Number.MAX_SAFE_INTEGER / 10) })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(lock.tryAcquire({ leaseMs: 0 })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await lock.isLocked()).toBe(false);
  });

  it('acquires, extends and releases one lock (acquires, extends, and releases a single lock)', async () => {
    const redis = await fx.redis();
    const lock = (await fx.client()).lock(uniqueName('single'));
    const day = 86_400_000;
    const lease = await lock.acquire({ leaseMs: day });
    // Within 200 ms of the lease, as the original checks; a loaded machine stays far inside it.
    expect(day - (await redis.pttl(lock.keys.lock))).toBeLessThan(60_000);
    await lease.extend(3 * day);
    expect(3 * day - (await redis.pttl(lock.keys.lock))).toBeLessThan(60_000);
    expect(await lock.currentToken()).toBe(lease.token);
    await lease.release();
    expect(await redis.exists(lock.keys.lock)).toBe(0);
  });

  it('an unreachable Redis: acquisition fails with a holdfast error, never a lease (locks fail when redis is unreachable)', async () => {
    const redis = (await fx.server()).client({
      host: '127.0.0.1',
      port: 1,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      retryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    const locks = new LockClient(redis, { prefix: fx.prefix, retries: 1, commandTimeoutMs: 500 });
    // Background clean-up of the failed attempt cannot reach Redis either: reported, not thrown.
    const background: unknown[] = [];
    locks.on('error', (e) => background.push(e));
    try {
      const error = await locks.lock(uniqueName('unreachable')).acquire({ waitMs: 1_000 }).catch((e: unknown) => e);
      expect(isHoldfastError(error)).toBe(true);
      // node-redis closes a client whose reconnectStrategy gave up (here, after its one failed
      // connection): a call then meets a closed client, RedisUnreachableError. ioredis stays open
      // and fails each command.
      const codes =
        clientMode === 'node-redis'
          ? ['ERR_LOCK_TIMEOUT', 'ERR_REDIS', 'ERR_REDIS_UNREACHABLE']
          : ['ERR_LOCK_TIMEOUT', 'ERR_REDIS', 'ERR_REDIS_TIMEOUT'];
      expect(codes).toContain((error as { code: string }).code);
      expect(locks.heldCount).toBe(0);
      for (const e of background) expect(isHoldfastError(e)).toBe(true);
    } finally {
      await locks.close();
      redis.disconnect();
    }
  });

  it('a lease nobody releases expires; the next acquisition gets the lock (locks automatically expire)', async () => {
    const name = uniqueName('expire');
    const locks = await fx.client();
    const first = await locks.lock(name).acquire({ leaseMs: 200 });
    await delay(300);
    expect(first.isHeld).toBe(false);
    const second = await locks.lock(name).acquire({ leaseMs: 200, waitMs: 5_000 });
    expect(second.token).toBeGreaterThan(first.token);
    await second.release();
    expect(await locks.lock(name).isLocked()).toBe(false);
  });

  it('a held lock is exclusive: tryAcquire null, a bounded wait times out, the holder is untouched (individual locks are exclusive)', async () => {
    const redis = await fx.redis();
    const name = uniqueName('exclusive');
    const lease = await (await fx.client()).lock(name).acquire({ leaseMs: 60_000 });
    const other = (await fx.client()).lock(name);
    expect(await other.tryAcquire()).toBeNull();
    const error = await other.acquire({ waitMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(await other.currentToken()).toBe(lease.token);
    expect(await redis.pttl(other.keys.lock)).toBeGreaterThan(30_000);
    await lease.release();
    expect(await redis.exists(other.keys.lock)).toBe(0);
  });

  it('withLock holds the lock through the callback, extended past its first lease, and releases it (the `using` helper acquires, extends, and releases locks)', async () => {
    const locks = await fx.client();
    const lock = locks.lock(uniqueName('using'));
    const result = await lock.withLock(
      async (lease) => {
        for (let i = 0; i < 5; i++) {
          await delay(250);
          await lease.extend();
        }
        expect(lease.signal.aborted).toBe(false);
        expect(await lock.currentToken()).toBe(lease.token);
        return lease.token;
      },
      { leaseMs: 1_000 },
    );
    expect(typeof result).toBe('number');
    expect(await lock.isLocked()).toBe(false);
  });

  it('two withLock calls started side by side run one after the other (the `using` helper is exclusive)', async () => {
    const locks = await fx.client();
    const lock = locks.lock(uniqueName('using-exclusive'));
    let locked = false;
    const section = async (lease: { token: number; signal: AbortSignal }) => {
      expect(locked).toBe(false);
      locked = true;
      await delay(100);
      expect(lease.signal.aborted).toBe(false);
      locked = false;
      return lease.token;
    };
    const [a, b] = await Promise.all([
      lock.withLock(section, { leaseMs: 5_000, waitMs: 10_000 }),
      lock.withLock(section, { leaseMs: 5_000, waitMs: 10_000 }),
    ]);
    expect(a).not.toBe(b);
    expect(await lock.isLocked()).toBe(false);
  });
});
