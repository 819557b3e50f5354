import { LockClient } from '@holdfast/core';
import { startRedisCluster, uniqueName, waitFor, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passFlavour } from './client-differences.js';

/**
 * End to end on GLIDE's `GlideClusterClient`, in the GLIDE pass (where `cluster.client()` is a GLIDE
 * Cluster twin and cluster.slow.test.ts runs the Cluster port contract on it): the waiter's
 * SSUBSCRIBE hears the holder's SPUBLISH. The other passes check that they are not that pass.
 */
if (passFlavour === 'glide') {
  describe('locks over a GLIDE Cluster client', () => {
    let cluster: RedisClusterFixture;
    beforeAll(async () => {
      cluster = await startRedisCluster(3);
    }, 60_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it('a waiter on another GLIDE Cluster client gets the lock when the holder releases it (sharded pub/sub)', async () => {
      const [holders, waiters] = [new LockClient(cluster.client()), new LockClient(cluster.client())];
      const name = uniqueName('glide:cluster-handoff');
      try {
        const held = await holders.lock(name).acquire({ waitMs: 10_000 });
        const waiting = waiters.lock(name).acquire({ waitMs: 20_000 });
        const entry = cluster.servers.map((server) => server.client());
        const sharded = async () => {
          const all = await Promise.all(entry.map((c) => c.call('PUBSUB', 'SHARDCHANNELS', '*') as Promise<string[]>));
          return all.flat();
        };
        await waitFor(async () => (await sharded()).some((channel) => channel.includes(name)), { timeoutMs: 10_000, message: 'the waiter never subscribed' });
        await held.release();
        const lease = await waiting;
        expect(lease.holdCount).toBe(1);
        await lease.release();
      } finally {
        await holders.close();
        await waiters.close();
      }
    });
  });
} else {
  describe('locks over a GLIDE Cluster client', () => {
    it('runs in the GLIDE pass only', () => {
      expect(passFlavour).not.toBe('glide');
    });
  });
}
