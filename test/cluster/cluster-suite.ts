import { startRedisCluster, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * The set-up every Cluster suite shares: one 3-primary / 3-replica cluster for
 * the `describe` it is called in, stopped after it, and no unhandled rejection
 * while it ran. Returns the fixture (usable from the tests on, once started).
 */
export function useRedisCluster(): RedisClusterFixture {
  let cluster: RedisClusterFixture | undefined;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await cluster?.stop();
    expect(unhandled).toEqual([]);
  });
  // Started in beforeAll: every read goes to the fixture of the moment.
  return new Proxy({} as RedisClusterFixture, {
    get(_, key) {
      if (!cluster) throw new Error('the cluster is used before it started (outside a test)');
      const value = Reflect.get(cluster, key, cluster) as unknown;
      return typeof value === 'function' ? value.bind(cluster) : value;
    },
  });
}
