import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import {
  startRedisReplicaPair,
  startRedisSentinel,
  type RedisReplicaPair,
  probeForSecondHolders,
  waitForRole,
  type RedisSentinel,
} from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** holdfast through ioredis's Sentinel support, across a `SENTINEL FAILOVER`. */
describe('behind Sentinel', () => {
  let pair: RedisReplicaPair;
  let sentinel: RedisSentinel;
  beforeAll(async () => {
    pair = await startRedisReplicaPair();
    sentinel = await startRedisSentinel(pair);
  }, 60_000);
  afterAll(async () => {
    await sentinel?.stop();
    await pair?.stop();
  });

  it('a Sentinel failover while leases are renewed: with minReplicas none is duplicated, and clients follow the new primary', async () => {
    // Until Sentinel demotes the old primary, a client still connected there renews on it, and
    // those writes are discarded when it resyncs (core README, "What failover can and cannot
    // do"): on a busy machine the window outlasts a 3 s lease. With minReplicas: 1 such a
    // renewal gets no acknowledgement, so the lease is reported lost instead of held twice.
    const renewing = new LockClient(sentinel.client(), { commandTimeoutMs: 1_000, minReplicas: 1 });
    const locks = new LockClient(sentinel.client(), { commandTimeoutMs: 1_000 });
    const probe = new LockClient(sentinel.client(), { commandTimeoutMs: 1_000 });
    const errors: unknown[] = [];
    probe.on('error', (e) => errors.push(e));
    renewing.on('error', () => undefined);
    const dog = new Watchdog(renewing, { timeoutMs: 3_000 });
    const lost = new Set<string>();
    renewing.on('lost', (e) => lost.add(e.name));
    // One after another: node-redis's Sentinel client leases its one primary connection to each
    // replicated call (script + WAIT), so 50 at once queue for it past the command timeout.
    const leases = [];
    for (let i = 0; i < 50; i++) leases.push(await renewing.lock(`s:${i}`).acquire());

    const before = await sentinel.primaryAddress();
    expect(before).toBe(`${pair.primary.host}:${pair.primary.port}`);
    const admin = sentinel.server.client();
    await admin.call('SENTINEL', 'FAILOVER', 'holdfast');
    const deadline = Date.now() + 30_000;
    while ((await sentinel.primaryAddress()) === before) {
      if (Date.now() > deadline) throw new Error('sentinel did not fail over');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await sentinel.primaryAddress()).toBe(`${pair.replica.host}:${pair.replica.port}`);

    // Two leases' worth of renewals across the switch, probing for a second holder.
    expect(await probeForSecondHolders(leases.slice(0, 20), probe, 6)).toEqual([]);
    for (const lease of leases) expect(lease.isHeld || lost.has(lease.name)).toBe(true);

    // Until Sentinel turns the old primary into a replica (killing its client
    // connections), clients still connected there keep using it: wait for that.
    await waitForRole(pair.primary.client(), 'slave', 30_000);
    // The clients now talk to the promoted replica: a fresh lock and a hand-off work there.
    const held = await locks.lock('after-failover').acquire({ leaseMs: 20_000 });
    const waiting = probe.lock('after-failover').acquire({ waitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    const releasedAt = performance.now();
    await held.release();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(3_000);
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
    const onNewPrimary = pair.replica.client();
    expect(await onNewPrimary.exists(locks.lock('after-failover').keys.fence)).toBe(1);

    await Promise.all(leases.filter((l) => l.isHeld).map((l) => l.release().catch(() => undefined)));
    await dog.stop();
    await renewing.close();
    await locks.close();
    await probe.close();
  }, 90_000);
});
