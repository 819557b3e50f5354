import { LockTimeoutError } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { waitFor } from '@holdfast/test-utils';
import { queued, useRedis } from '../helpers.js';

describe('bounded waits', () => {
  const fx = useRedis();

  it('waitMs ends with LockTimeoutError and leaves no queue entry', async () => {
    const holder = await fx.client();
    const waiter = await fx.client();
    const redis = await fx.redis();
    const lease = await holder.lock('timeout').acquire();
    const started = performance.now();
    const error = await waiter.lock('timeout').acquire({ waitMs: 300 }).catch((e: unknown) => e);
    const waited = performance.now() - started;
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect(error).toMatchObject({ code: 'ERR_LOCK_TIMEOUT', lockName: 'timeout' });
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(3_000);
    // The background cancel takes the timed-out waiter's queue place back.
    const keys = holder.lock('timeout').keys;
    await waitFor(async () => (await redis.llen(keys.queue)) === 0);
    await lease.release();
    expect(await redis.exists(keys.lock)).toBe(0);
  });

  it('an aborted signal ends the wait with its reason', async () => {
    const holder = await fx.client();
    const waiter = await fx.client();
    const lease = await holder.lock('abort').acquire();
    const controller = new AbortController();
    const reason = new Error('shutting down');
    const waiting = waiter.lock('abort').acquire({ signal: controller.signal });
    setTimeout(() => controller.abort(reason), 100);
    await expect(waiting).rejects.toBe(reason);
    await expect(waiter.lock('abort').acquire({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    await lease.release();
    // The queue entry was withdrawn: the lock is free for a third party at once.
    await waitFor(async () => (await (await fx.redis()).llen(waiter.lock('abort').keys.queue)) === 0);
    expect(await (await fx.client()).lock('abort').tryAcquire()).not.toBeNull();
  });

  it('tryAcquire never waits', async () => {
    const holder = await fx.client();
    const other = await fx.client();
    const lease = await holder.lock('try').acquire();
    const started = performance.now();
    expect(await other.lock('try').tryAcquire()).toBeNull();
    expect(performance.now() - started).toBeLessThan(1_000);
    await lease.release();
    const got = await other.lock('try').tryAcquire({ leaseMs: 1_000 });
    expect(got?.holdCount).toBe(1);
    await got?.release();
  });

  it('a waiter handed the lock as it times out gives it on to the next one', async () => {
    const holder = await fx.client();
    const quitter = await fx.client();
    const patient = await fx.client();
    const lease = await holder.lock('quit').acquire();
    const quitting = quitter.lock('quit').acquire({ waitMs: 200 }).catch((e: unknown) => e);
    await queued(await fx.redis(), holder.lock('quit').keys.queue);
    const waiting = patient.lock('quit').acquire({ waitMs: 5_000 });
    expect(await quitting).toBeInstanceOf(LockTimeoutError);
    await lease.release();
    const got = await waiting;
    expect(got.isHeld).toBe(true);
    await got.release();
  });
});
