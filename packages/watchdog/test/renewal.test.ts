import type { LostEvent } from '@holdfast/core';
import { commandStatsDelta, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import type { LeaseLostEvent, RenewedEvent } from '@holdfast/watchdog';
import { delay, spyOnRenewals, statsBetweenTicks, useWatchdogFixture } from './helpers.js';

describe('renewal against a real Redis', () => {
  const fx = useWatchdogFixture();

  it('keeps a lease past 3× timeoutMs while another client is refused, then hands it over on release', async () => {
    const locks = fx.locks();
    // Long enough that a busy machine's stalls cannot outlast a lease (see semaphore.test.ts).
    const dog = fx.watchdog(locks, { timeoutMs: 1_500 });
    const renewed: RenewedEvent[] = [];
    dog.on('renewed', (event) => renewed.push(event));
    const rival = fx.rival(locks.options.prefix);

    const lease = await locks.lock('job').acquire();
    expect(lease.leaseMs).toBe(1_500);
    expect(dog.watchedCount).toBe(1);
    const heldSince = performance.now();
    let refusals = 0;
    while (performance.now() - heldSince < 3 * 1_500 + 100) {
      expect(await rival.lock('job').tryAcquire({ leaseMs: 1_000 })).toBeNull();
      refusals++;
      await delay(100);
    }
    expect(refusals).toBeGreaterThanOrEqual(5);
    expect(lease.isHeld).toBe(true);
    expect(lease.signal.aborted).toBe(false);
    // Surviving three leases takes at least four renewals (one every third of a lease).
    expect(renewed.length).toBeGreaterThanOrEqual(4);
    expect(renewed.every((event) => event.count === 1 && event.failed === 0 && event.lost === 0)).toBe(true);

    await lease.release();
    const taken = await rival.lock('job').tryAcquire({ leaseMs: 1_000 });
    expect(taken).not.toBeNull();
    await taken!.release();
  });

  it('does not renew an acquisition with an explicit leaseMs: it expires', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 600 });
    const spy = spyOnRenewals(locks);
    const clientLost: LostEvent[] = [];
    const dogLost: LeaseLostEvent[] = [];
    locks.on('lost', (event) => clientLost.push(event));
    dog.on('lost', (event) => dogLost.push(event));

    const fixed = await locks.lock('fixed').acquire({ leaseMs: 400 });
    const renewedLease = await locks.lock('renewed').acquire();
    expect(fixed.leaseMs).toBe(400);
    expect(dog.watchedCount).toBe(1);

    await waitFor(() => clientLost.length > 0, { timeoutMs: 2_000 });
    expect(clientLost.map((event) => [event.name, event.reason])).toEqual([['fixed', 'expired']]);
    expect(fixed.signal.aborted).toBe(true);
    expect(dogLost).toEqual([]);
    expect(spy.sent.every((call) => !call.names.includes('fixed'))).toBe(true);

    const rival = fx.rival(locks.options.prefix);
    await waitFor(async () => (await rival.lock('fixed').tryAcquire({ leaseMs: 1_000 })) !== null, {
      timeoutMs: 2_000,
    });
    // The renewed one, acquired at the same moment, is still ours.
    expect(renewedLease.isHeld).toBe(true);
    expect(await rival.lock('renewed').tryAcquire({ leaseMs: 1_000 })).toBeNull();
    await renewedLease.release();
  });

  it('renews re-entrant holds once: one script call and one PEXPIRE per tick', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 600 });
    const spy = spyOnRenewals(locks);
    const admin = fx.redis();
    const lock = locks.lock('nested');

    await lock.withLock(async () => {
      await lock.withLock(async (inner) => {
        await lock.withLock(async (innermost) => {
          expect(inner.holdCount).toBe(2);
          expect(innermost.holdCount).toBe(3);
          expect(dog.watchedCount).toBe(1);
          const before = await statsBetweenTicks(admin, spy);
          await waitFor(() => spy.calls >= before.calls + 3, { timeoutMs: 5_000 });
          const after = await statsBetweenTicks(admin, spy);
          const ticks = after.calls - before.calls;
          const delta = commandStatsDelta(before.stats, after.stats);
          expect(ticks).toBeGreaterThanOrEqual(3);
          expect(delta.evalsha).toBe(ticks);
          expect(delta.pexpire).toBe(ticks);
          expect(spy.sent.slice(-ticks).map((call) => call.names)).toEqual(Array(ticks).fill(['nested']));
        });
      });
    });
    expect(dog.watchedCount).toBe(0);
  });

  it('sends no renewal command after release', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 600 });
    const spy = spyOnRenewals(locks);
    const admin = fx.redis();

    const lease = await locks.lock('short').acquire();
    await waitFor(() => spy.calls >= 2 && spy.inFlight === 0, { timeoutMs: 3_000 });
    await lease.release();
    expect(dog.watchedCount).toBe(0);

    const before = await statsBetweenTicks(admin, spy);
    await delay(3 * dog.renewIntervalMs + 100);
    const after = await statsBetweenTicks(admin, spy);
    expect(after.calls).toBe(before.calls);
    const delta = commandStatsDelta(before.stats, after.stats);
    expect(delta.evalsha ?? 0).toBe(0);
    expect(delta.eval ?? 0).toBe(0);
    expect(delta.pexpire ?? 0).toBe(0);
  });

  it('stops renewing a force-released lock and reports it deleted', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 600 });
    const spy = spyOnRenewals(locks);
    const dogLost: LeaseLostEvent[] = [];
    dog.on('lost', (event) => dogLost.push(event));

    const lease = await locks.lock('forced').acquire();
    expect(await locks.lock('forced').forceRelease()).toBe(true);
    expect(dog.watchedCount).toBe(0);
    expect(dogLost.map((event) => event.reason)).toEqual(['deleted']);
    expect(lease.signal.aborted).toBe(true);
    const calls = spy.calls;
    await delay(2 * dog.renewIntervalMs + 100);
    expect(spy.calls).toBe(calls);
  });

  it('renews 2000 leases with one script call per 500 keys per tick', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 4_000 });
    const spy = spyOnRenewals(locks);
    const admin = fx.redis();
    const renewed: RenewedEvent[] = [];
    dog.on('renewed', (event) => renewed.push(event));

    const names = Array.from({ length: 2_000 }, (_, i) => `bulk:${i}`);
    const leases = await Promise.all(names.map((name) => locks.lock(name).tryAcquire()));
    expect(leases.every((lease) => lease !== null)).toBe(true);
    expect(dog.watchedCount).toBe(2_000);

    const before = await statsBetweenTicks(admin, spy);
    await waitFor(() => spy.calls >= before.calls + 1, { timeoutMs: 5_000 });
    const after = await statsBetweenTicks(admin, spy);
    const ticks = after.calls - before.calls;
    const delta = commandStatsDelta(before.stats, after.stats);
    expect(ticks).toBeGreaterThanOrEqual(1);
    expect(delta.evalsha).toBe(Math.ceil(2_000 / 500) * ticks);
    expect(delta.pexpire).toBe(2_000 * ticks);
    expect(renewed.at(-1)).toMatchObject({ count: 2_000, failed: 0, lost: 0 });
    console.log(
      `2000 leases: ${delta.evalsha! / ticks} renew script calls per tick, ` +
        `${renewed.at(-1)!.durationMs} ms per tick`,
    );
  });
});
