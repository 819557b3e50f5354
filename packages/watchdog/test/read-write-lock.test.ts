import { LockLostError } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { spyOnRenewals, useWatchdogFixture } from './helpers.js';

/** Read-write lock holds renewed by the watchdog, in the same batched calls as mutex holds. */
describe('watchdog and read-write locks', () => {
  const fx = useWatchdogFixture();

  it('renews readers, a writer and a mutex in the same ticks, past their first lease', async () => {
    const locks = fx.locks({ prefix: 'wd-rw' });
    // Generous: a tick late by most of a lease on a busy machine still renews in time.
    const dog = fx.watchdog(locks, { timeoutMs: 1_500 });
    const spy = spyOnRenewals(locks);
    const a = locks.readWriteLock('wd-doc');
    const r1 = await a.read.acquire();
    const r2 = await a.read.acquire();
    const w = await locks.readWriteLock('wd-other').write.acquire();
    const m = await locks.lock('wd-mutex').acquire();
    await waitFor(() => spy.calls >= 5 && spy.inFlight === 0, { timeoutMs: 20_000 });
    for (const lease of [r1, r2, w, m]) expect(lease.isHeld).toBe(true);
    expect(spy.sent.some((call) => ['wd-doc', 'wd-other', 'wd-mutex'].every((name) => call.names.includes(name)))).toBe(true);
    const rival = fx.rival('wd-rw');
    expect(await rival.readWriteLock('wd-doc').write.tryAcquire()).toBeNull();
    expect(await rival.readWriteLock('wd-other').read.tryAcquire()).toBeNull();
    for (const lease of [r1, r2, w, m]) await lease.release();
    expect(dog.watchedCount).toBe(0);
  });

  it('a reader whose hold was removed is reported lost by the renewal, with its kind', async () => {
    const locks = fx.locks({ prefix: 'wd-rw' });
    const dog = fx.watchdog(locks, { timeoutMs: 600 });
    const lost: { kind?: string; reason: string }[] = [];
    locks.on('lost', (e) => lost.push({ kind: e.kind, reason: e.reason }));
    const dogLost: { kind?: string; reason: string; error: LockLostError }[] = [];
    dog.on('lost', (e) => dogLost.push({ kind: e.kind, reason: e.reason, error: e.error }));
    void dog;
    const r = await locks.readWriteLock('wd-removed').read.acquire();
    const rival = fx.rival('wd-rw');
    expect(await rival.readWriteLock('wd-removed').read.forceRelease()).toBe(true);
    await waitFor(() => !r.isHeld, { timeoutMs: 10_000 });
    expect(lost).toEqual([{ kind: 'read', reason: 'deleted' }]);
    // The watchdog's own event carries the same kind as the client's.
    expect(dogLost.map(({ kind, reason }) => ({ kind, reason }))).toEqual([{ kind: 'read', reason: 'deleted' }]);
    expect(dogLost[0]!.error).toBeInstanceOf(LockLostError);
  });
});
