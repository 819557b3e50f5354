import { afterAll, describe, expect, it } from 'vitest';
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
} else {
  describe('port contract: Cluster (glide)', () => {
    it('runs in the ioredis 5 pass only (its outcome does not depend on the pass)', () => {
      expect(passFlavour).not.toBe('ioredis-5');
    });
  });
}
