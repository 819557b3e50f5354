import { getEventListeners } from 'node:events';
import { LockClient } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/**
 * Node warns (`MaxListenersExceededWarning`) once an AbortSignal has more
 * than ten 'abort' listeners. Many waits on one caller's signal, or a
 * multi-lock of many names, are ordinary use: holdfast keeps one listener
 * per signal, whatever the number of waits on it.
 */
describe('abort listeners', () => {
  const fx = useRedis();
  const WAITS = 20;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning);
  };
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  /** Resolves once `count` waiters sleep in the queue of `name`: read through the waiters' own connection, so their replies came first. */
  async function sleeping(locks: LockClient, redis: Awaited<ReturnType<typeof fx.redis>>, name: string, count: number): Promise<void> {
    await waitFor(async () => (await redis.llen(locks.lock(name).keys.queue)) === count);
    // Each waiter went to sleep in the promise callbacks of its reply, before this turn ends.
    await new Promise((resolve) => setImmediate(resolve));
  }

  it(`${WAITS} waits on one signal: one listener, no warning, and the abort ends every wait`, async () => {
    const holder = await fx.client();
    const redis = await fx.redis();
    const waiters = await fx.client({}, redis);
    const lease = await holder.lock('shared').acquire({ leaseMs: 30_000 });
    const controller = new AbortController();
    const waits = Array.from({ length: WAITS }, () =>
      waiters.lock('shared').acquire({ signal: controller.signal }).catch((error: unknown) => error),
    );
    await sleeping(waiters, redis, 'shared', WAITS);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('stop waiting');
    controller.abort(reason);
    expect(await Promise.all(waits)).toEqual(Array.from({ length: WAITS }, () => reason));
    expect(warnings).toEqual([]);
    // Every queue entry withdrawn: the lock goes to nobody after the release.
    await waitFor(async () => (await redis.llen(waiters.lock('shared').keys.queue)) === 0);
    await lease.release();
    expect(await redis.exists(waiters.lock('shared').keys.lock)).toBe(0);
  });

  it('a signal whose waits all ended without an abort keeps no listener', async () => {
    const holder = await fx.client();
    const redis = await fx.redis();
    const waiters = await fx.client({}, redis);
    const lease = await holder.lock('served').acquire({ leaseMs: 30_000 });
    const controller = new AbortController();
    const waits = Array.from({ length: WAITS }, () =>
      waiters.lock('served').acquire({ signal: controller.signal }).then((got) => got.release()),
    );
    await sleeping(waiters, redis, 'served', WAITS);
    await lease.release();
    await Promise.all(waits);
    expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it(`a multi-lock of ${WAITS} names, with and without a signal, adds no warning`, async () => {
    const locks = await fx.client();
    const names = Array.from({ length: WAITS }, (_, i) => `multi-${i}`);
    const multi = locks.multiLock(names);
    const first = await multi.acquire({ leaseMs: 30_000 });
    await first.release();
    const controller = new AbortController();
    const second = await multi.acquire({ leaseMs: 30_000, signal: controller.signal });
    expect(second.names).toEqual(names);
    await second.release();
    expect(warnings).toEqual([]);
    expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
  });
});
