import { Redlock } from '@holdfast/redlock';
import { FaultProxy } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useServers } from './helpers.js';

describe('Redlock and its clients connections', () => {
  const fx = useServers(3);

  it('fresh clients with enableOfflineQueue: false vote on the first tryAcquire', async () => {
    for (let round = 0; round < 3; round++) {
      // Through the harness: node-redis clients with `disableOfflineQueue` in the node-redis pass.
      const clients = fx.clients({ enableOfflineQueue: false });
      const redlock = new Redlock(clients, { prefix: fx.prefix, instanceTimeoutMs: 10_000 });
      redlock.on('error', () => undefined);
      try {
        const lease = await redlock.lock(`fresh-${round}`).tryAcquire();
        expect(lease).not.toBeNull();
        await lease!.release();
      } finally {
        await redlock.close();
        for (const c of clients) c.disconnect();
      }
    }
  });

  it('emits no error event once close() has resolved, even with clean-ups still failing', async () => {
    // One instance answers late (its grants arrive after the quorum decided,
    // and are undone in the background) and is then cut off.
    const proxy = await FaultProxy.start({ host: fx.servers[0]!.host, port: fx.servers[0]!.port });
    const slow = fx.servers[0]!.client({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 0 });
    await slow.ping();
    const others = fx.servers.slice(1).map((s) => s.client());
    const redlock = new Redlock([slow, ...others], { prefix: fx.prefix, instanceTimeoutMs: 100, commandTimeoutMs: 300, retries: 0 });
    const errors: { afterClose: boolean }[] = [];
    let closed = false;
    redlock.on('error', () => errors.push({ afterClose: closed }));
    try {
      proxy.setLatency(150);
      for (let i = 0; i < 3; i++) {
        const lease = await redlock.lock(`late-${i}`).acquire({ waitMs: 5_000 });
        await lease.release().catch(() => undefined);
      }
      proxy.blackhole(true);
      await redlock.close();
      closed = true;
      await new Promise((r) => setTimeout(r, 1_000));
      expect(errors.filter((e) => e.afterClose)).toEqual([]);
    } finally {
      await proxy.close();
      slow.disconnect();
      for (const c of others) c.disconnect();
    }
  });
});
