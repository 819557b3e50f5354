import { LockClient, type RedisLike } from '@holdfast/core';
import { Cluster as IoredisCluster, Redis as Ioredis } from 'ioredis';
import { Cluster as ValkeyCluster, Valkey } from 'iovalkey';
import { Redlock } from '@holdfast/redlock';
import { Watchdog } from '@holdfast/watchdog';
import { createClient, createCluster, createSentinel, RESP_TYPES } from 'redis';
import * as redis6 from 'redis6';
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

  it('node-redis 5 createClient, createCluster and createSentinel, RESP2 and RESP3, without casts', () => {
    expectTypeOf(new LockClient(createClient())).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(createClient({ RESP: 3 }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(createClient().withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(createCluster({ rootNodes: [] }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(createSentinel({ name: 'm', sentinelRootNodes: [] }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new Watchdog(new LockClient(createClient()))).toEqualTypeOf<Watchdog>();
    expectTypeOf(new Redlock([createClient(), createClient({ RESP: 3 })])).toEqualTypeOf<Redlock>();
  });

  it('node-redis 6 createClient, createCluster and createSentinel', () => {
    expectTypeOf(new LockClient(redis6.createClient())).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(redis6.createClient({ RESP: 3 }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(redis6.createCluster({ rootNodes: [] }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new LockClient(redis6.createSentinel({ name: 'm', sentinelRootNodes: [] }))).toEqualTypeOf<LockClient>();
    expectTypeOf(new Redlock([redis6.createClient(), createClient(), new Ioredis({ lazyConnect: true })])).toEqualTypeOf<Redlock>();
  });

  it('not something else', () => {
    // @ts-expect-error a plain object is not a client
    void new LockClient({});
    // @ts-expect-error neither is a client without evalsha
    void new LockClient({ eval: async () => 1, pipeline: () => ({}), on: () => undefined });
  });
});
