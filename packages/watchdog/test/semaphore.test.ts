import { LockClient, type LostEvent } from '@holdfast/core';
import { FaultProxy, readmeAcl, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Watchdog, type LeaseLostEvent, type RenewedEvent } from '@holdfast/watchdog';
import { delay, spyOnRenewals, useWatchdogFixture } from './helpers.js';

describe('semaphore leases under a watchdog', () => {
  const fx = useWatchdogFixture();

  it('renews permit leases in the same ticks as locks, past 3× timeoutMs', async () => {
    const locks = fx.locks();
    // Long enough that a busy machine's stalls (this process starved for several hundred ms
    // while both cores run other suites) cannot outlast a lease: what is tested is that the
    // renewals keep it, not how promptly this process gets a core.
    const dog = fx.watchdog(locks, { timeoutMs: 1_500 });
    const spy = spyOnRenewals(locks);
    const renewed: RenewedEvent[] = [];
    dog.on('renewed', (event) => renewed.push(event));
    const rival = fx.rival(locks.options.prefix);

    const sem = locks.semaphore('pool', { permits: 3 });
    const permits = await sem.acquire({ permits: 2 });
    const lock = await locks.lock('pool').acquire();
    expect(permits.leaseMs).toBe(1_500);
    expect(dog.watchedCount).toBe(2);
    const heldSince = performance.now();
    while (performance.now() - heldSince < 3 * 1_500 + 100) {
      expect(await rival.semaphore('pool', { permits: 3 }).availablePermits()).toBe(1);
      await delay(100);
    }
    expect(permits.isHeld && lock.isHeld).toBe(true);
    expect(renewed.length).toBeGreaterThanOrEqual(4);
    expect(renewed.every((event) => event.failed === 0 && event.lost === 0)).toBe(true);
    // One renewHolds call per tick carries both kinds.
    expect(spy.sent.some((call) => call.names.length === 2)).toBe(true);
    await permits.release();
    await lock.release();
    expect(dog.watchedCount).toBe(0);
    expect(await rival.semaphore('pool', { permits: 3 }).availablePermits()).toBe(3);
  });

  it('a holder removed from Redis is reported lost by the next tick', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 600 });
    const lost: LeaseLostEvent[] = [];
    dog.on('lost', (event) => lost.push(event));
    const sem = locks.semaphore('removed', { permits: 1 });
    const lease = await sem.acquire();
    await fx.redis().del(sem.keys.lock, sem.keys.expiry);
    await waitFor(() => lost.length === 1, { timeoutMs: 10_000 });
    expect(lost[0]).toMatchObject({ name: 'removed', reason: 'deleted', kind: 'semaphore' });
    expect(lease.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST', reason: 'deleted' });
  });

  it('reports `lost` while the server still holds the permits when renewals stop getting through', async () => {
    const proxy = await FaultProxy.start({ host: fx.server.host, port: fx.server.port });
    fx.defer(() => proxy.close());
    const redis = fx.server.client({ host: proxy.host, port: proxy.port, maxRetriesPerRequest: 0 });
    fx.defer(() => redis.disconnect());
    const locks = fx.locks({ commandTimeoutMs: 200, retries: 0 }, redis);
    locks.on('error', () => undefined);
    const dog = fx.watchdog(locks, { timeoutMs: 1_000 });
    dog.on('renewalFailed', () => undefined);
    const admin = fx.redis();
    const sem = locks.semaphore('partition', { permits: 1 });
    const lease = await sem.acquire();
    const seen: { score: number; now: number }[] = [];
    const onLost = (event: LostEvent) => {
      if (event.kind !== 'semaphore') return;
      // The moment of the report, on the clock the server dates leases by (one host, one wall
      // clock): a read of the server's TIME here would land later on a busy machine, and measure
      // that delay instead. The lease end is read over a connection the partition does not cut.
      const now = Date.now();
      // A failed read records nothing (the test's count of reports then fails), never an unhandled rejection.
      void admin.zrange(sem.keys.expiry, '0', '0', 'WITHSCORES').then(
        (holder) => void seen.push({ score: Number(holder[1] ?? 0), now }),
        () => undefined,
      );
    };
    locks.on('lost', onLost);
    proxy.blackhole(true);
    await waitFor(() => seen.length === 1, { timeoutMs: 15_000 });
    expect(lease.signal.reason).toMatchObject({ reason: 'unreachable' });
    expect(seen[0]!.score).toBeGreaterThan(seen[0]!.now);
    proxy.blackhole(false);
    fx.errors.splice(0);
  });
});

/** The watchdog README's ACL (read from it) is enough to renew semaphore leases. */
describe('semaphore renewal under the minimal ACL', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('watchdog'));
    admin.disconnect();
  });
  afterAll(() => server?.stop());

  it('renews a permit lease past several lease lengths with no failure', async () => {
    const locks = new LockClient(server.client({ username: 'locks', password: 'secret' }));
    const dog = new Watchdog(locks, { timeoutMs: 1_000 }); // a lease no stall of a busy machine outlasts
    const failures: unknown[] = [];
    dog.on('renewalFailed', (e) => failures.push(e.error));
    locks.on('error', (e) => failures.push(e));
    const lease = await locks.semaphore('acl-renewed', { permits: 2 }).acquire();
    await delay(2_500);
    expect(lease.isHeld).toBe(true);
    expect(failures).toEqual([]);
    await lease.release();
    await dog.stop();
    await locks.close();
  });
});
