import { LockLostError, lockKeys, type LostEvent } from '@holdfast/core/workspace';
import type { LeaseLostEvent } from '@holdfast/watchdog';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, spyOnRenewals, useWatchdogFixture } from './helpers.js';

/** Names whose lock keys share one hash slot, then one in another slot. */
function mixedNames(base: string): string[] {
  const slot = lockKeys('p', `${base}-0`).slot;
  const names = [`${base}-0`];
  let other: string | undefined;
  for (let i = 1; names.length < 2 || other === undefined; i++) {
    const name = `${base}-${i}`;
    if (lockKeys('p', name).slot === slot) {
      if (names.length < 2) names.push(name);
    } else other ??= name;
  }
  return [...names, other];
}

describe('multi-locks under the watchdog', () => {
  const fx = useWatchdogFixture();

  it('renews every part in the same batched calls as plain leases, past 3× timeoutMs', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 1_000 });
    const spy = spyOnRenewals(locks);
    const rival = fx.rival(locks.options.prefix);
    const names = mixedNames('wd-multi');
    const lease = await locks.multiLock(names).acquire();
    const plain = await locks.lock('wd-plain').acquire();
    expect(lease.leaseMs).toBe(1_000);
    expect(dog.watchedCount).toBe(4);
    const heldSince = performance.now();
    while (performance.now() - heldSince < 3 * 1_000 + 100) {
      expect(await rival.multiLock(names).tryAcquire({ leaseMs: 1_000 })).toBeNull();
      await delay(100);
    }
    expect(lease.isHeld).toBe(true);
    // One renewHolds call per tick carries the parts and the plain lease together.
    const full = spy.sent.filter((call) => call.names.length === 4);
    expect(full.length).toBeGreaterThanOrEqual(2);
    expect(full.every((call) => [...names, 'wd-plain'].every((name) => call.names.includes(name)))).toBe(true);
    await lease.release();
    await plain.release();
    expect(dog.watchedCount).toBe(0);
    const taken = await rival.multiLock(names).tryAcquire();
    expect(taken).not.toBeNull();
    await taken!.release();
  });

  it('a part deleted on the server aborts the multi-lease at the next renewal, before the others expire', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 1_000 });
    const dogLost: LeaseLostEvent[] = [];
    dog.on('lost', (event) => dogLost.push(event));
    const admin = fx.redis();
    const lost: LostEvent[] = [];
    locks.on('lost', (event) => lost.push(event));
    const names = mixedNames('wd-lost');
    const lease = await locks.multiLock(names).acquire();
    await admin.del(locks.lock(names[2]!).keys.lock);
    await waitFor(() => lease.signal.aborted, { timeoutMs: 5_000 });
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
    expect((lease.signal.reason as LockLostError).lockName).toBe(names[2]);
    expect(lost.map((e) => [e.name, e.reason, e.multiLock])).toEqual([[names[2], 'deleted', names]]);
    // The watchdog's own event names the multi-lock as the client's does.
    expect(dogLost.map((e) => [e.name, e.reason, e.multiLock, e.kind])).toEqual([[names[2], 'deleted', names, undefined]]);
    // The other parts are still held (renewed) until released.
    for (const name of names.slice(0, 2)) expect(await admin.pttl(locks.lock(name).keys.lock)).toBeGreaterThan(0);
    await expect(lease.release()).rejects.toMatchObject({ code: 'ERR_MULTI_RELEASE', released: names.slice(0, 2) });
    for (const name of names) expect(await admin.exists(locks.lock(name).keys.lock)).toBe(0);
  });
});
