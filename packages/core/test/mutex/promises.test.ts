import {
  ClientClosedError,
  KeyConflictError,
  LockClient,
  LockLostError,
  LockNotHeldError,
  isHoldfastError,
  type LostEvent,
} from '@holdfast/core';
import { blockEventLoop } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * Regression tests for promises the README makes that broke in ordinary use:
 * an expired grant handed out, leases that outlived close(), foreign data at
 * a lock's key. Each fails on the code before the fix.
 */

/**
 * A client that has locked once: its first acquisition checks the server
 * (eviction policy) before sending; later ones send at once, which these
 * tests need (the call must be written before the event loop is blocked).
 */
async function warmClient(fx: ReturnType<typeof useRedis>, redis: Awaited<ReturnType<ReturnType<typeof useRedis>['redis']>>) {
  const locks = await fx.client({}, redis);
  await (await locks.lock('warm-up').acquire()).release();
  return locks;
}

describe('a lease that already expired is never handed out', () => {
  const fx = useRedis();

  it('acquire() whose reply is read after its lease ran out tries again and returns a live lease', async () => {
    const redis = await fx.redis();
    const locks = await warmClient(fx, redis);
    const lock = locks.lock('expired-on-arrival');
    const acquired: number[] = [];
    locks.on('acquired', ({ token }) => acquired.push(token));
    // The call is written at once; the loop is blocked past the lease before its reply is read.
    const pending = lock.acquire({ leaseMs: 400, waitMs: 10_000 });
    blockEventLoop(1_000);
    const lease = await pending;
    expect(lease.isHeld).toBe(true);
    expect(lease.signal.aborted).toBe(false);
    // The expired grant was never announced; the lease handed out is a later one.
    expect(acquired).toEqual([lease.token]);
    expect(lease.token).toBeGreaterThan(1);
    await lease.release();
    expect(await lock.isLocked()).toBe(false);
  });

  it('tryAcquire() in the same situation returns null and leaves nothing held', async () => {
    const redis = await fx.redis();
    const locks = await warmClient(fx, redis);
    const lock = locks.lock('expired-on-arrival-try');
    const pending = lock.tryAcquire({ leaseMs: 300 });
    blockEventLoop(800);
    expect(await pending).toBeNull();
    expect(locks.heldCount).toBe(0);
    expect(await lock.isLocked()).toBe(false);
  });

  it('withLock never starts its callback on an expired lease', async () => {
    const redis = await fx.redis();
    const locks = await warmClient(fx, redis);
    const lock = locks.lock('expired-on-arrival-with-lock');
    const seen: boolean[] = [];
    const running = lock.withLock((lease) => seen.push(lease.signal.aborted), { leaseMs: 300, waitMs: 10_000 });
    blockEventLoop(800);
    await running;
    expect(seen).toEqual([false]);
  });
});

describe('close() ends every lease still held', () => {
  const fx = useRedis();

  it('aborts the signal with ClientClosedError, emits lost (closed), and later calls reject with ClientClosedError', async () => {
    const locks = await fx.client();
    const lease = await locks.lock('closing').acquire({ leaseMs: 5_000 });
    const lost: LostEvent[] = [];
    locks.on('lost', (event) => lost.push(event));
    const signal = lease.signal;
    await locks.close();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(ClientClosedError);
    expect(lease.isHeld).toBe(false);
    expect(lost.map((e) => [e.name, e.reason, e.token])).toEqual([['closing', 'closed', lease.token]]);
    expect(lost[0]!.error).toBeInstanceOf(LockLostError);
    expect(lost[0]!.error.cause).toBeInstanceOf(ClientClosedError);
    await expect(lease.release()).rejects.toBeInstanceOf(ClientClosedError);
    await expect(lease.extend()).rejects.toBeInstanceOf(ClientClosedError);
    // Disposal stays silent, as for any lease that ended.
    await expect(lease[Symbol.asyncDispose]()).resolves.toBeUndefined();
    // Not released: the lock stays in Redis until its TTL.
    const probe = await fx.client();
    expect(await probe.lock('closing').isLocked()).toBe(true);
  });

  it('a signal first read after close() is already aborted', async () => {
    const locks = await fx.client();
    const lease = await locks.lock('closing-late-signal').acquire({ leaseMs: 5_000 });
    await locks.close();
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(ClientClosedError);
  });

  it('a withLock running across close() rejects with ClientClosedError', async () => {
    const locks = await fx.client();
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const running = locks.lock('closing-with-lock').withLock(async (lease) => {
      entered();
      await delay(50);
      return lease.signal.aborted;
    });
    // It may reject during close(), before its assertion: a handler at once keeps it from being reported unhandled.
    running.catch(() => undefined);
    await inside;
    await locks.close();
    await expect(running).rejects.toBeInstanceOf(ClientClosedError);
  });

  it('close({ release: true }) aborts the signals first, then frees the locks', async () => {
    const locks = await fx.client();
    const lease = await locks.lock('closing-release').acquire({ leaseMs: 5_000 });
    const order: string[] = [];
    lease.signal.addEventListener('abort', () => order.push('aborted'));
    const closing = locks.close({ release: true });
    order.push('close returned');
    await closing;
    expect(order).toEqual(['aborted', 'close returned']);
    const probe = await fx.client();
    expect(await probe.lock('closing-release').isLocked()).toBe(false);
  });

  it('a non-boolean release flag keeps the leases in Redis only when false', async () => {
    const locks = await fx.client();
    await locks.lock('closing-default').acquire({ leaseMs: 5_000 });
    await locks.close({});
    const probe = await fx.client();
    expect(await probe.lock('closing-default').isLocked()).toBe(true);
  });
});

describe('data holdfast did not write at a lock key is never touched', () => {
  const fx = useRedis();

  async function snapshot(redis: Awaited<ReturnType<typeof fx.redis>>, key: string) {
    const type = await redis.type(key);
    const value =
      type === 'hash' ? await redis.hgetall(key) : type === 'string' ? await redis.get(key) : await redis.lrange(key, 0, -1);
    return { type, value, pttl: await redis.pttl(key) };
  }

  for (const [kind, write] of [
    ['a hash without a token field', (r: Awaited<ReturnType<typeof fx.redis>>, k: string) => r.hset(k, 'app', 'data', 'n', '1')],
    ['a string', (r: Awaited<ReturnType<typeof fx.redis>>, k: string) => r.set(k, 'app-value')],
    ['a list', (r: Awaited<ReturnType<typeof fx.redis>>, k: string) => r.rpush(k, 'a', 'b')],
  ] as const) {
    it(`${kind}: acquire, tryAcquire, withLock and forceRelease reject with KeyConflictError and leave it as it was`, async () => {
      const redis = await fx.redis();
      const locks = await fx.client({}, redis);
      const lock = locks.lock(`foreign-${kind.replace(/\W+/g, '-')}`);
      await write(redis, lock.keys.lock);
      const before = await snapshot(redis, lock.keys.lock);
      const errors = [
        await lock.acquire({ waitMs: 1_000 }).catch((e: unknown) => e),
        await lock.tryAcquire().catch((e: unknown) => e),
        await lock.withLock(() => 'ran').catch((e: unknown) => e),
        await lock.forceRelease().catch((e: unknown) => e),
      ];
      for (const error of errors) {
        expect(error).toBeInstanceOf(KeyConflictError);
        expect(isHoldfastError(error) && error.code).toBe('ERR_KEY_CONFLICT');
      }
      expect(await lock.isLocked()).toBe(true);
      expect(await lock.currentToken()).toBeNull();
      expect(await snapshot(redis, lock.keys.lock)).toEqual(before);
    });
  }

  it('a held lock whose key is replaced by foreign data is lost (taken) on release and extend, never deleted', async () => {
    const redis = await fx.redis();
    const locks = await fx.client({}, redis);
    const lock = locks.lock('foreign-after-grant');
    const lost: string[] = [];
    locks.on('lost', ({ reason }) => lost.push(reason));
    const first = await lock.acquire({ leaseMs: 5_000 });
    const second = await lock.acquire({ leaseMs: 5_000, waitMs: 50 }).catch(() => undefined);
    expect(second).toBeUndefined();
    await redis.del(lock.keys.lock);
    await redis.hset(lock.keys.lock, 'app', 'data');
    const before = await snapshot(redis, lock.keys.lock);
    const error = await first.extend().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).reason).toBe('taken');
    await expect(first.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(lost).toEqual(['taken']);
    expect(await snapshot(redis, lock.keys.lock)).toEqual(before);

    const again = await lock.acquire({ leaseMs: 5_000 }).catch(() => undefined);
    expect(again).toBeUndefined();
    await redis.del(lock.keys.lock);
    const held = await lock.acquire({ leaseMs: 5_000 });
    await redis.del(lock.keys.lock);
    await redis.set(lock.keys.lock, 'app-value');
    await expect(held.release()).rejects.toBeInstanceOf(LockNotHeldError);
    expect(await redis.get(lock.keys.lock)).toBe('app-value');
  });
});

describe('listeners', () => {
  const fx = useRedis();

  it('a listener that returns a rejected promise reports to error listeners and crashes nothing', async () => {
    const locks = await fx.client();
    const errors: unknown[] = [];
    locks.on('error', (error) => errors.push(error));
    const boom = new Error('async listener failed');
    locks.on('acquired', async () => {
      await delay(1);
      throw boom;
    });
    const lease = await locks.lock('async-listener').acquire();
    await lease.release();
    await delay(20);
    expect(errors).toEqual([boom]);
  });

  it('with no error listener, a failing listener becomes a process warning instead of vanishing', async () => {
    const locks = await fx.client();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      locks.on('acquired', () => {
        throw new Error('sync listener failed');
      });
      locks.on('released', () => Promise.reject(new Error('async listener failed')));
      const lease = await locks.lock('warned-listener').acquire();
      await lease.release();
      await delay(20);
    } finally {
      process.off('warning', onWarning);
    }
    const ours = warnings.filter((w) => w.name === 'HoldfastWarning');
    expect(ours.map((w) => (w as Error & { code?: string }).code)).toEqual([
      'HOLDFAST_UNHANDLED_ERROR',
      'HOLDFAST_UNHANDLED_ERROR',
    ]);
    expect(ours.map((w) => /sync listener failed|async listener failed/.test(w.message))).toEqual([true, true]);
  });

  it('an error listener that throws is reported as a warning too', async () => {
    const locks = new LockClient(await fx.redis(), { prefix: fx.prefix });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      locks.on('error', () => {
        throw new Error('error listener failed');
      });
      locks.on('acquired', () => {
        throw new Error('listener failed');
      });
      const lease = await locks.lock('throwing-error-listener').acquire();
      await lease.release();
      await delay(20);
    } finally {
      process.off('warning', onWarning);
      await locks.close();
    }
    expect(warnings.filter((w) => w.name === 'HoldfastWarning').map((w) => w.message)).toEqual([
      "Unhandled holdfast 'error' event: Error: error listener failed",
    ]);
  });
});
