import { KeyConflictError, LockLostError, type LostEvent } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

describe('semaphore forceRelease', () => {
  const fx = useRedis();

  it("takes every holder's permits back, reports local leases lost and wakes the waiters it makes room for", async () => {
    const a = await fx.client();
    const b = await fx.client();
    const redis = await fx.redis();
    const lost: LostEvent[] = [];
    a.on('lost', (e) => lost.push(e));
    const semA = a.semaphore('force', { permits: 3 });
    const mine = await semA.acquire({ permits: 2 });
    const theirs = await b.semaphore('force', { permits: 3 }).acquire({ permits: 1 });
    const semB = b.semaphore('force', { permits: 3 });
    // Queued in this order: 3 permits at the head, then 1 behind it.
    const big = semB.acquire({ permits: 3, waitMs: 10_000 });
    await waitFor(async () => (await redis.llen(semB.keys.queue)) === 1);
    const small = semB.acquire({ permits: 1, waitMs: 10_000 });
    await waitFor(async () => (await redis.llen(semB.keys.queue)) === 2);

    expect(await semA.forceRelease()).toBe(true);
    // This client's lease ends at once, with the mutex's typed event.
    expect(lost).toMatchObject([{ kind: 'semaphore', name: 'force', token: mine.token, reason: 'deleted' }]);
    expect(mine.signal.reason).toBeInstanceOf(LockLostError);
    // The head is served first; the small request still waits behind it.
    const bigLease = await big;
    expect(bigLease.permits).toBe(3);
    expect(bigLease.token).toBeGreaterThan(theirs.token);
    expect(await semA.availablePermits()).toBe(0);
    // The other client's lease finds out at its next call.
    await expect(theirs.extend()).rejects.toBeInstanceOf(LockLostError);
    await bigLease.release();
    const smallLease = await small;
    await smallLease.release();
    expect(await semA.forceRelease()).toBe(false);
    // The count lives on.
    expect(await redis.hget(semA.keys.lock, '#')).toBe('3');
    expect(await semA.availablePermits()).toBe(3);
  });

  it('leaves data holdfast did not write as it is', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const sem = locks.semaphore('foreign', { permits: 2 });
    await redis.set(sem.keys.lock, 'not ours');
    await expect(sem.forceRelease()).rejects.toBeInstanceOf(KeyConflictError);
    expect(await redis.get(sem.keys.lock)).toBe('not ours');
  });

  it('reports foreign data at the expiry set, used or never used, and leaves every key as it is', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    for (const used of [false, true]) {
      const sem = locks.semaphore(`foreign-expiry-${used}`, { permits: 2 });
      if (used) await (await sem.acquire()).release();
      const before = await redis.hgetall(sem.keys.lock);
      await redis.set(sem.keys.expiry, 'not ours');
      await expect(sem.forceRelease()).rejects.toBeInstanceOf(KeyConflictError);
      expect(await redis.get(sem.keys.expiry)).toBe('not ours');
      expect(await redis.hgetall(sem.keys.lock)).toEqual(before);
    }
  });
});
