import { isHoldfastError, type PermitLease } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { betweenTicks, pauseThroughExpiries, recordLost, useServerFaults } from '../server-faults.js';

/** Each holder's lease end on the server (ms, the server's clock), from a semaphore's expiry sorted set. */
async function holderExpiries(admin: Redis, expiryKey: string): Promise<number[]> {
  const flat = await admin.zrange(expiryKey, '0', '-1', 'WITHSCORES');
  return flat.filter((_, i) => i % 2 === 1).map(Number);
}

/** Holder fields of a semaphore hash (the count '#' and the permits in use '=' left out). */
async function holderFields(admin: Redis, key: string): Promise<string[]> {
  return Object.keys(await admin.hgetall(key)).filter((field) => field !== '#' && field !== '=');
}

/** A stale lease's release fails, typed. */
async function expectStale(leases: readonly PermitLease[]): Promise<void> {
  for (const lease of leases) {
    const error = await lease.release().then(() => undefined, (e: unknown) => e);
    expect(isHoldfastError(error)).toBe(true);
  }
}

/** Semaphores on a redis-server of their own, stopped (SIGSTOP) past the lease, or killed and restarted. */
describe('semaphore: server paused and killed', () => {
  const fx = useServerFaults();

  for (const renewed of [true, false]) {
    it(`paused past the lease (${renewed ? 'renewed by a watchdog' : 'no watchdog'}): every lease lost by its server expiry, none revived, a fresh client takes every permit`, async () => {
      const prefix = fx.prefix();
      // A wide drift margin: a loaded machine's late timers must not eat it.
      const { locks, dog, spy } = fx.locks(prefix, { commandTimeoutMs: 200, driftFactor: 0.2 }, renewed ? { timeoutMs: 1_500 } : undefined);
      const admin = fx.redis();
      const lost = recordLost(locks);
      const pool = locks.semaphore('paused-pool', { permits: 3 });
      const pair = locks.semaphore('paused-pair', { permits: 2 });
      const options = renewed ? {} : { leaseMs: 1_500 };
      const leases: PermitLease[] = [
        await pool.acquire(options),
        await pool.acquire(options),
        await pair.acquire({ ...options, permits: 2 }),
      ];
      if (renewed) await waitFor(() => spy.calls >= 2 && spy.inFlight === 0, { timeoutMs: 20_000 });

      // What the server holds when it stops: each holder's own lease end.
      const expiries = await betweenTicks(spy, async () => [
        ...(await holderExpiries(admin, pool.keys.expiry)),
        ...(await holderExpiries(admin, pair.keys.expiry)),
      ]);
      // A lease is lost before (or at) the moment its permits go back on the server.
      await pauseThroughExpiries(fx.server, leases, expiries);
      expect(leases.map((lease) => lease.isHeld)).toEqual([false, false, false]);
      expect(lost.map((event) => `${event.kind}:${event.name}`).sort()).toEqual([
        'semaphore:paused-pair',
        'semaphore:paused-pool',
        'semaphore:paused-pool',
      ]);
      for (const event of lost) expect(renewed ? ['unreachable', 'expired'] : ['expired']).toContain(event.reason);
      for (const lease of leases) expect(lease.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST' });
      expect(dog?.watchedCount ?? 0).toBe(0);

      fx.server.resume();
      // Renewals that hung on the stopped server now run against ended leases: none revives one.
      await waitFor(() => spy.inFlight === 0, { timeoutMs: 20_000 });
      const rival = fx.locks(prefix).locks;
      const rivalPool = rival.semaphore('paused-pool', { permits: 3 });
      const rivalPair = rival.semaphore('paused-pair', { permits: 2 });
      expect(await rivalPool.availablePermits()).toBe(3);
      expect(await rivalPair.availablePermits()).toBe(2);
      expect(await holderFields(admin, pool.keys.lock)).toEqual([]);
      expect(await holderFields(admin, pair.keys.lock)).toEqual([]);
      expect(lost).toHaveLength(3);

      const taken = [await rivalPool.tryAcquire({ permits: 3, leaseMs: 10_000 }), await rivalPair.tryAcquire({ permits: 2, leaseMs: 10_000 })];
      expect(taken.map((lease) => lease !== null)).toEqual([true, true]);
      // The server kept its fencing counters: the new tokens are above every earlier one.
      expect(taken[0]!.token).toBeGreaterThan(Math.max(...leases.map((lease) => lease.token)));
      // The stale leases' releases fail, typed, and give back none of the new holders' permits.
      await expectStale(leases);
      expect(await rivalPool.availablePermits()).toBe(0);
      expect(await rivalPair.availablePermits()).toBe(0);
      for (const lease of taken) await lease!.release();
      expect(await rivalPool.availablePermits()).toBe(3);
    }, 90_000);
  }

  it('killed (SIGKILL) and restarted empty: leases lost (not revived), waiters served after the restart, never more than the count', async () => {
    const prefix = fx.prefix();
    const { locks, dog } = fx.locks(prefix, { commandTimeoutMs: 300 }, { timeoutMs: 3_000 });
    const other = fx.locks(prefix, { commandTimeoutMs: 300 }).locks;
    const admin = fx.redis();
    const lost = recordLost(locks);
    const sem = locks.semaphore('crash', { permits: 3 });
    const held = [await sem.acquire({ permits: 2 }), await sem.acquire({ permits: 1 })];
    const theirs = other.semaphore('crash', { permits: 3 });
    const waitOptions = { waitMs: 60_000, leaseMs: 20_000 };
    const waiting = [theirs.acquire({ ...waitOptions, permits: 2 }), theirs.acquire({ ...waitOptions, permits: 1 })];
    await waitFor(async () => (await admin.hlen(sem.keys.waiters)) === 2, { timeoutMs: 20_000 });
    const oldOwners = await holderFields(admin, sem.keys.lock);
    expect(oldOwners).toHaveLength(2);

    await fx.server.kill();
    await fx.server.restart();

    // Every lease is reported lost: its renewal finds it gone (or the server unreachable).
    await waitFor(() => lost.length === 2, { timeoutMs: 30_000 });
    for (const event of lost) {
      expect(event).toMatchObject({ kind: 'semaphore', name: 'crash' });
      expect(['deleted', 'taken', 'unreachable']).toContain(event.reason);
    }
    expect(held.map((lease) => lease.isHeld)).toEqual([false, false]);
    expect(dog!.watchedCount).toBe(0);

    // The waiters blocked on the crashed server are served by the restarted one, within the count.
    const served = await Promise.all(waiting);
    expect(served.map((lease) => lease.isHeld)).toEqual([true, true]);
    expect(await theirs.availablePermits()).toBe(0);
    // Not revived: only the new holders are in the restarted server's hash, with the count stored again.
    const fields = await holderFields(admin, sem.keys.lock);
    expect(fields).toHaveLength(2);
    expect(fields.filter((owner) => oldOwners.includes(owner))).toEqual([]);
    expect(await admin.hget(sem.keys.lock, '#')).toBe('3');
    // The stale leases give back nothing of the new holders'.
    await expectStale(held);
    expect(await theirs.availablePermits()).toBe(0);
    for (const lease of served) await lease.release();
    expect(await theirs.availablePermits()).toBe(3);
  }, 120_000);
});

/** The same crash with an AOF (appendfsync always): nothing is forgotten, the token promise holds across it. */
describe('semaphore: server killed and restarted from its AOF', () => {
  const fx = useServerFaults({ persistent: true });

  it('permits held across the crash are still held; tokens keep increasing', async () => {
    const prefix = fx.prefix();
    const { locks } = fx.locks(prefix, { commandTimeoutMs: 300 });
    const rival = fx.locks(prefix, { commandTimeoutMs: 300 }).locks;
    const sem = locks.semaphore('durable', { permits: 2 });
    const before: number[] = [];
    for (let i = 0; i < 3; i++) await sem.withLock((lease) => void before.push(lease.token));
    const lease = await sem.acquire({ permits: 2, leaseMs: 60_000 });

    await fx.server.kill();
    await fx.server.restart();

    const admin = fx.redis();
    await waitFor(async () => (await admin.ping().catch(() => '')) === 'PONG', { timeoutMs: 30_000 });
    // The lease came back with the data: a rival finds no permit free.
    const theirs = rival.semaphore('durable', { permits: 2 });
    expect(await theirs.tryAcquire({ leaseMs: 10_000 })).toBeNull();
    expect(await theirs.availablePermits()).toBe(0);
    expect(lease.isHeld).toBe(true);
    await lease.release();
    const next = await theirs.acquire({ permits: 2, waitMs: 30_000 });
    expect(next.token).toBeGreaterThan(Math.max(...before, lease.token));
    await next.release();
    expect(await theirs.availablePermits()).toBe(2);
  }, 90_000);
});
