import { MultiLockReleaseError, type LockClient, type LostEvent, type MultiLease } from '@holdfast/core';
import { lockFields, waitFor, differentSlotNames, sameSlotNames } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { betweenTicks, untilWallClock, useServerFaults } from '../server-faults.js';

/** Names in three hash slots: two alone, two sharing one (taken by one script call). */
function mixedNames(base: string): string[] {
  return [...differentSlotNames(`${base}-x`, 2), ...sameSlotNames(`${base}-g`, 2)];
}

/** Each name's lock hash, owner fields only: owner → hold count. */
async function owners(admin: Redis, locks: LockClient, name: string): Promise<string[]> {
  const hash = await lockFields(admin, locks.lock(name).keys.lock);
  return Object.keys(hash).filter((field) => !field.startsWith('@'));
}

/** A stale multi-lease's release: it fails, naming no part released. */
async function expectNothingReleased(lease: MultiLease): Promise<void> {
  const error = await lease.release().then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(MultiLockReleaseError);
  expect((error as MultiLockReleaseError).released).toEqual([]);
  expect([...(error as MultiLockReleaseError).failures.keys()].sort()).toEqual([...lease.names].sort());
}

/** Multi-locks over several hash slots on a redis-server of their own, stopped past the lease, or killed and restarted empty. */
describe('multi-lock: server paused and killed', () => {
  const fx = useServerFaults();

  for (const renewed of [true, false]) {
    it(`paused past the lease (${renewed ? 'renewed by a watchdog' : 'no watchdog'}): the signal aborts by the first part's server expiry, every part lost, none revived`, async () => {
      const prefix = fx.prefix();
      const { locks, dog, spy } = fx.locks(prefix, { commandTimeoutMs: 200, driftFactor: 0.2 }, renewed ? { timeoutMs: 1_500 } : undefined);
      const admin = fx.redis();
      const lost: LostEvent[] = [];
      locks.on('lost', (event) => lost.push(event));
      const names = mixedNames('paused');
      const lease = await locks.multiLock(names).acquire(renewed ? {} : { leaseMs: 1_500 });
      if (renewed) await waitFor(() => spy.calls >= 2 && spy.inFlight === 0, { timeoutMs: 20_000 });

      // When each part's key ends on the server (wall-clock ms), read as the server stops.
      const expiries = await betweenTicks(spy, () =>
        Promise.all(names.map(async (name) => Number(await admin.call('PEXPIRETIME', locks.lock(name).keys.lock)))),
      );
      fx.server.pause();
      expect(expiries.every((at) => at > 0)).toBe(true);

      // Once the first part is gone on the server, the lease's one signal has aborted.
      await untilWallClock(Math.min(...expiries));
      expect(lease.signal.aborted).toBe(true);
      expect(lease.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST' });
      expect(lease.isHeld).toBe(false);
      // Once the last is gone, every part has been reported lost, each naming the multi-lock.
      await untilWallClock(Math.max(...expiries));
      void lease.isHeld;
      expect(lost.map((event) => event.name).sort()).toEqual([...names].sort());
      for (const event of lost) {
        expect(event.multiLock).toEqual(names);
        expect(renewed ? ['unreachable', 'expired'] : ['expired']).toContain(event.reason);
      }
      expect(dog?.watchedCount ?? 0).toBe(0);

      fx.server.resume();
      // Renewals that hung on the stopped server run against expired keys: nothing is revived,
      // nothing is left half-held.
      await waitFor(() => spy.inFlight === 0, { timeoutMs: 20_000 });
      for (const name of names) expect(await admin.exists(locks.lock(name).keys.lock), name).toBe(0);
      expect(lost).toHaveLength(names.length);

      // A rival over overlapping names (and one more) gets all of them; the stale lease frees none.
      const rivalNames = [names[3]!, names[0]!, 'paused-extra'];
      const rival = fx.locks(prefix).locks;
      const taken = await rival.multiLock(rivalNames).tryAcquire({ leaseMs: 10_000 });
      expect(taken).not.toBeNull();
      for (const name of rivalNames.slice(0, 2)) expect(taken!.tokens.get(name)).toBeGreaterThan(lease.tokens.get(name)!);
      await expectNothingReleased(lease);
      for (const name of rivalNames) expect(await rival.lock(name).currentToken()).toBe(taken!.tokens.get(name));
      await taken!.release();
      for (const name of [...names, ...rivalNames]) expect(await admin.exists(locks.lock(name).keys.lock), name).toBe(0);
    }, 90_000);
  }

  it('killed (SIGKILL) and restarted empty: the whole lease lost, nothing half-held, a waiter and a rival over overlapping names get them', async () => {
    const prefix = fx.prefix();
    const { locks, dog } = fx.locks(prefix, { commandTimeoutMs: 300 }, { timeoutMs: 3_000 });
    const other = fx.locks(prefix, { commandTimeoutMs: 300 }).locks;
    const admin = fx.redis();
    const lost: LostEvent[] = [];
    locks.on('lost', (event) => lost.push(event));
    const names = mixedNames('crash');
    const lease = await locks.multiLock(names).acquire();

    const waiterNames = [names[3]!, names[0]!, 'crash-extra'];
    const waiting = other.multiLock(waiterNames).acquire({ waitMs: 60_000, leaseMs: 20_000 });
    const queued = async () => {
      const lengths = await Promise.all(waiterNames.map((name) => admin.hlen(other.lock(name).keys.waiters)));
      return lengths.reduce((a, b) => a + b, 0);
    };
    await waitFor(async () => (await queued()) === 1, { timeoutMs: 20_000 });

    await fx.server.kill();
    await fx.server.restart();

    // Every part is reported lost (its renewal finds it gone, or taken once the waiter got in);
    // the lease's one signal aborts with the first.
    await waitFor(() => lost.length === names.length, { timeoutMs: 30_000 });
    expect(lost.map((event) => event.name).sort()).toEqual([...names].sort());
    for (const event of lost) expect(['deleted', 'taken', 'unreachable']).toContain(event.reason);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.isHeld).toBe(false);
    expect(dog!.watchedCount).toBe(0);

    // The waiter blocked on the crashed server gets every one of its names from the restarted one.
    const got = await waiting;
    expect(got.isHeld).toBe(true);
    // Nothing half-held: each of the waiter's names has one owner, the waiter (its token is the
    // lock's), and the old lease's other names are free.
    for (const name of waiterNames) {
      expect(await owners(admin, other, name), name).toHaveLength(1);
      expect(await other.lock(name).currentToken()).toBe(got.tokens.get(name));
    }
    for (const name of names.filter((n) => !waiterNames.includes(n))) {
      expect(await admin.exists(locks.lock(name).keys.lock), name).toBe(0);
    }
    // The stale lease frees none of the waiter's names.
    await expectNothingReleased(lease);
    for (const name of waiterNames) expect(await other.lock(name).currentToken()).toBe(got.tokens.get(name));
    await got.release();
    for (const name of [...names, ...waiterNames]) expect(await admin.exists(locks.lock(name).keys.lock), name).toBe(0);

    // A rival multi-lock over the old names (overlapping the waiter's) takes them all.
    const rival = fx.locks(prefix).locks;
    const taken = await rival.multiLock([...names].reverse()).tryAcquire({ leaseMs: 10_000 });
    expect(taken).not.toBeNull();
    expect(taken!.isHeld).toBe(true);
    await taken!.release();
    for (const name of names) expect(await admin.exists(locks.lock(name).keys.lock), name).toBe(0);
  }, 120_000);
});
