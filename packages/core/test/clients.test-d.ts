import { LockClient, type RedisLike } from '@holdfast/core';
import { Cluster as IoredisCluster, Redis as Ioredis } from 'ioredis';
import { Cluster as ValkeyCluster, Valkey } from 'iovalkey';
import { describe, expectTypeOf, it } from 'vitest';

// Clients are accepted by shape (RedisLike): ioredis 5 or 6 (the pass's `ioredis`, see
// vitest.config.ts) and iovalkey, whose classes are alike but distinct to TypeScript.
describe('the clients LockClient accepts', () => {
  it('ioredis Redis and Cluster', () => {
    expectTypeOf(new LockClient(new Ioredis({ lazyConnect: true }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(new IoredisCluster([], { lazyConnect: true }))).toEqualTypeOf<LockClient>();
  });

  it('iovalkey Valkey and Cluster', () => {
    expectTypeOf(new LockClient(new Valkey({ lazyConnect: true }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(new ValkeyCluster([], { lazyConnect: true }))).toEqualTypeOf<LockClient>();
    expectTypeOf<Valkey>().toMatchTypeOf<RedisLike>();
  });

  it('not something else', () => {
    // @ts-expect-error a plain object is not a client
    void new LockClient({});
    // @ts-expect-error neither is a client without evalsha
    void new LockClient({ eval: async () => 1, pipeline: () => ({}), on: () => undefined });
  });
});
