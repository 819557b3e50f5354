import { LockClient, RedisTimeoutError, isHoldfastError, type LockClientOptions } from '@holdfast/core';
import { lockFields, startRedis } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay } from '../helpers.js';
import { useProxyFaults } from '../proxy-faults.js';

/** Faults injected into real processes: a dedicated server, a proxy in front of it. */
describe('faults', () => {
  const fx = useProxyFaults();

  const throughProxy = (options: LockClientOptions = {}) => fx.throughProxy({ prefix: 'faults', ...options });

  const holdCount = async (locks: LockClient, name: string) => {
    const hash = await lockFields(fx.admin, locks.lock(name).keys.lock);
    return Object.entries(hash).filter(([field]) => !field.startsWith('@')).map(([, v]) => Number(v));
  };

  it('a lost reply after apply leaves the hold count exact: acquire, re-entry, release', async () => {
    const locks = await throughProxy();
    const lock = locks.lock('lost-reply');
    let dropped = fx.proxy.dropNextReply();
    await lock.withLock(async (outer) => {
      await dropped;
      expect(outer.holdCount).toBe(1);
      expect(await holdCount(locks, 'lost-reply')).toEqual([1]);
      dropped = fx.proxy.dropNextReply();
      const inner = await lock.acquire();
      await dropped;
      expect(inner.holdCount).toBe(2);
      expect(await holdCount(locks, 'lost-reply')).toEqual([2]);
      dropped = fx.proxy.dropNextReply();
      await inner.release();
      await dropped;
      expect(await holdCount(locks, 'lost-reply')).toEqual([1]);
    });
    expect(await holdCount(locks, 'lost-reply')).toEqual([]);
  });

  it('a lost reply to the final release still reports success', async () => {
    const locks = await throughProxy();
    const events: string[] = [];
    locks.on('released', () => events.push('released'));
    locks.on('lost', () => events.push('lost'));
    const lease = await locks.lock('lost-final').acquire();
    const dropped = fx.proxy.dropNextReply();
    await lease.release();
    await dropped;
    expect(events).toEqual(['released']);
    expect(await holdCount(locks, 'lost-final')).toEqual([]);
  }, 20_000);

  it('lost replies in 50 trials never double-count', async () => {
    const locks = await throughProxy();
    const lock = locks.lock('lost-trials');
    for (let i = 0; i < 50; i++) {
      await lock.withLock(async () => {
        const dropped = fx.proxy.dropNextReply();
        const inner = await lock.acquire();
        await dropped;
        expect(await holdCount(locks, 'lost-trials')).toEqual([2]);
        await inner.release();
      });
      expect(await holdCount(locks, 'lost-trials')).toEqual([]);
    }
  }, 60_000);

  it('SCRIPT FLUSH breaks nothing', async () => {
    const admin = fx.admin;
    const locks = fx.locks({ prefix: 'flush' });
    const lock = locks.lock('flushed');
    for (let i = 0; i < 3; i++) {
      await admin.script('FLUSH');
      const lease = await lock.acquire();
      await admin.script('FLUSH');
      await lease.extend(5_000);
      await admin.script('FLUSH');
      await lease.release();
    }
    expect(await lock.isLocked()).toBe(false);
  });

  it('a hung server fails calls with RedisTimeoutError within the bound', async () => {
    const locks = await throughProxy({ commandTimeoutMs: 200, retries: 1 });
    const lock = locks.lock('hung');
    await (await lock.acquire()).release();
    fx.proxy.blackhole(true);
    const started = performance.now();
    const error = await lock.tryAcquire().catch((e: unknown) => e);
    const took = performance.now() - started;
    expect(error).toBeInstanceOf(RedisTimeoutError);
    expect(isHoldfastError(error) && error.code).toBe('ERR_REDIS_TIMEOUT');
    // One attempt plus one retry of 200 ms each, plus backoff.
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(3_000);
    fx.proxy.blackhole(false);
  });

  it('a paused server (SIGSTOP) times an acquire out within its waitMs', async () => {
    const paused = await startRedis();
    fx.onCleanup(() => paused.stop());
    const locks = new LockClient(paused.client(), { prefix: 'paused', commandTimeoutMs: 150 });
    fx.onCleanup(() => locks.close());
    paused.pause();
    const started = performance.now();
    const error = await locks.lock('p').acquire({ waitMs: 500 }).catch((e: unknown) => e);
    expect(isHoldfastError(error)).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_500);
    paused.resume();
    await delay(50);
  });

  it('connection resets while waiting are survived', async () => {
    const locks = await throughProxy();
    const other = fx.locks({ prefix: 'faults' });
    const lease = await other.lock('reset').acquire({ leaseMs: 1_500 });
    const waiting = locks.lock('reset').acquire({ waitMs: 10_000 });
    await delay(100);
    fx.proxy.resetAll();
    await delay(100);
    await lease.release();
    const got = await waiting;
    expect(got.isHeld).toBe(true);
    await got.release();
  });
});
