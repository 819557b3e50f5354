import { LockClient } from '@holdfast/core';
import { startRedisCluster, uniqueName, waitFor, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passFlavour } from './client-differences.js';
import { describeClusterContract } from './contract-cluster.js';
import { glideConfig, glideStandIn } from './glide-client.js';

/**
 * The Cluster port contract (contract-cluster.ts) on Valkey GLIDE 2.x's `GlideClusterClient`,
 * over a real 3-primary cluster. Its outcome does not depend on the pass's client, so its body
 * runs in the ioredis 5 pass only; the other passes check that they are not that pass.
 */
if (passFlavour === 'ioredis-5') {
  const opened: (() => void)[] = [];
  afterAll(() => {
    for (const close of opened.splice(0)) close();
  });
  describeClusterContract('glide', (cluster, options) => glideStandIn(glideConfig(cluster.servers[0]!, options), true, opened));

  // End to end: the waiter's SSUBSCRIBE on GLIDE's Cluster client hears the holder's SPUBLISH.
  describe('locks over a GLIDE Cluster client', () => {
    let cluster: RedisClusterFixture;
    beforeAll(async () => {
      cluster = await startRedisCluster(3);
    }, 60_000);
    afterAll(async () => {
      await cluster?.stop();
    });

    it('a waiter on another GLIDE Cluster client gets the lock when the holder releases it (sharded pub/sub)', async () => {
      const make = () => glideStandIn(glideConfig(cluster.servers[0]!), true, opened);
      const [holders, waiters] = [new LockClient(make()), new LockClient(make())];
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
  describe('port contract: Cluster (glide)', () => {
    it('runs in the ioredis 5 pass only (its outcome does not depend on the pass)', () => {
      expect(passFlavour).not.toBe('ioredis-5');
    });
  });
}
