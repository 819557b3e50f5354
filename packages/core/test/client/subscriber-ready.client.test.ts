import { LockClient } from '@holdfast/core';
import { FaultProxy, sharedRedis, uniqueName, waitFor } from '@holdfast/test-utils';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

/**
 * ioredis lets SSUBSCRIBE out while a new connection is still being set up;
 * the reply turns it into a subscriber connection before ioredis's ready
 * check (INFO), which is then refused, and the reconnection that follows came
 * back without the subscription: waiters slept until their wait ran out
 * although the lock had been released. Behind a proxy with latency the
 * window is wide enough to hit every time.
 */
describe('a waiter that subscribes while the subscriber connection is being set up', () => {
  for (const gapMs of [0, 80, 140]) {
    it(`is woken by the release (second waiter ${gapMs} ms after the first)`, async () => {
      const server = await sharedRedis();
      const proxy = await FaultProxy.start({ host: server.host, port: server.port });
      const direct = server.client();
      const viaProxy = server.client({ port: proxy.port });
      await viaProxy.ping();
      // Widens the window between the TCP connection and ioredis's ready check.
      proxy.setLatency(50);
      const holder = new LockClient(direct, { prefix: 'sub-ready' });
      const waiter = new LockClient(viaProxy, { prefix: 'sub-ready' });
      const [a, b] = [uniqueName('a'), uniqueName('b')];
      try {
        const leases = await Promise.all([
          holder.lock(a).acquire({ leaseMs: 60_000 }),
          holder.lock(b).acquire({ leaseMs: 60_000 }),
        ]);
        // The first wait creates the subscriber connection; the second joins while it is set up.
        const first = waiter.lock(a).acquire({ waitMs: 10_000 });
        await new Promise((r) => setTimeout(r, gapMs));
        const second = waiter.lock(b).acquire({ waitMs: 10_000 });
        await new Promise((r) => setTimeout(r, 1_000));
        await Promise.all(leases.map((l) => l.release()));
        // 60 s leases, 10 s waits: only the release messages can get them in.
        const outcomes = await Promise.allSettled([first, second]);
        expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled']);
      } finally {
        await Promise.all([holder.close(), waiter.close()]);
        await proxy.close();
        direct.disconnect();
        viaProxy.disconnect();
      }
    }, 30_000);
  }
});

/**
 * Start-up code often makes the client with `lazyConnect` and the LockClient
 * before `connect()`. The subscriber is a duplicate, lazy too: it used to wait
 * for a `ready` nothing started, and the first waiter slept until the command
 * timeout instead of being woken by the release.
 */
describe('a client made with lazyConnect (ioredis)', () => {
  it('subscribes as soon as a waiter needs it, and the waiter is woken by the release', async () => {
    const server = await sharedRedis();
    const lazy = new Redis({ host: server.host, port: server.port, lazyConnect: true });
    // A command timeout longer than the checks below: only a subscription made at once passes them.
    const waiter = new LockClient(lazy, { prefix: 'lazy-sub', commandTimeoutMs: 30_000 });
    await lazy.connect();
    const admin = new Redis({ host: server.host, port: server.port });
    const holder = new LockClient(admin, { prefix: 'lazy-sub' });
    const errors: unknown[] = [];
    waiter.on('error', (error) => errors.push(error));
    const name = uniqueName('lazy');
    try {
      const lease = await holder.lock(name).acquire({ leaseMs: 60_000 });
      const waiting = waiter.lock(name).acquire({ waitMs: 20_000 });
      const channel = waiter.lock(name).keys.channel;
      await waitFor(async () => ((await admin.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1] === 1, {
        timeoutMs: 10_000,
        message: 'the waiter never subscribed',
      });
      await lease.release();
      await (await waiting).release();
      expect(errors).toEqual([]);
    } finally {
      await Promise.all([waiter.close(), holder.close()]);
      lazy.disconnect();
      admin.disconnect();
    }
  }, 30_000);
});
