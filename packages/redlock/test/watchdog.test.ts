import { Watchdog } from '@holdfast/watchdog';
import { uniqueName } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, expectCounts, useServers } from './helpers.js';

describe('Watchdog over a Redlock', () => {
  const fx = useServers(3);

  it('keeps a lease held past 3× timeoutMs on a majority while another Redlock cannot take it', async () => {
    const redlock = fx.redlock({ instanceTimeoutMs: 200 });
    const lost: unknown[] = [];
    redlock.on('lost', (e) => lost.push(e));
    const watchdog = new Watchdog(redlock, { timeoutMs: 600 });
    const rival = fx.redlock();
    const name = uniqueName('watched');
    try {
      const lease = await redlock.lock(name).acquire();
      expect(lease.leaseMs).toBe(600);
      expect(watchdog.watchedCount).toBe(1);
      const started = performance.now();
      let attempts = 0;
      while (performance.now() - started < 3 * 600 + 300) {
        expect(await rival.lock(name).tryAcquire()).toBeNull();
        attempts++;
        await delay(150);
      }
      expect(attempts).toBeGreaterThan(5);
      expect(lease.isHeld).toBe(true);
      expect(lease.signal.aborted).toBe(false);
      expect(lost).toEqual([]);
      // Renewed on every instance, not only the first majority to answer.
      const ttls = await fx.pttls(redlock.lock(name).keys.lock);
      expect(ttls.filter((ttl) => ttl > 0).length).toBeGreaterThanOrEqual(redlock.quorum);
      await lease.release();
      expect(watchdog.watchedCount).toBe(0);
      const next = await rival.lock(name).tryAcquire();
      expect(next).not.toBeNull();
      expect(next!.token).toBeGreaterThan(lease.token);
      await next!.release();
    } finally {
      await watchdog.stop();
    }
  }, 20_000);

  it('reports a watched lease lost once a majority is gone', async () => {
    const redlock = fx.redlock({ instanceTimeoutMs: 200 });
    const watchdog = new Watchdog(redlock, { timeoutMs: 600 });
    const reasons: string[] = [];
    redlock.on('lost', (e) => reasons.push(e.reason));
    try {
      const lock = redlock.lock(uniqueName('watched-lost'));
      const lease = await lock.acquire();
      // Every instance has granted by now, so the deletion below is not undone by a late grant.
      await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
      const admins = fx.servers.slice(0, 2).map((s) => s.client());
      await Promise.all(admins.map((r) => r.del(lock.keys.lock)));
      const deadline = performance.now() + 3_000;
      while (!lease.signal.aborted && performance.now() < deadline) await delay(50);
      expect(lease.signal.aborted).toBe(true);
      expect(reasons).toEqual(['deleted']);
    } finally {
      await watchdog.stop();
    }
  });
});
