import { LockClient } from '@holdfast/core';
import { FaultProxy, sharedRedis, uniqueName } from '@holdfast/test-utils';
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
