import { EvictionPolicyError, LockClient, isHoldfastError } from '@holdfast/core';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A server that evicts keys can drop a held lock (a rival takes it while it
 * is held) or a fencing counter (tokens go backwards). holdfast checks the
 * policy (INFO, which works where CONFIG is refused) before the first
 * acquisition and refuses by default.
 */
describe('servers that evict keys', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ args: ['--maxmemory', '200mb', '--maxmemory-policy', 'allkeys-lru'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("refuses acquisitions by default with EvictionPolicyError, and writes nothing", async () => {
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: 'evict-refuse' });
    for (const attempt of [
      () => locks.lock('a').acquire({ waitMs: 1_000 }),
      () => locks.lock('a').tryAcquire(),
      () => locks.lock('a').withLock(() => 'ran'),
    ]) {
      const error = await attempt().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EvictionPolicyError);
      expect(isHoldfastError(error) && error.code).toBe('ERR_EVICTION_POLICY');
      expect((error as EvictionPolicyError).policy).toBe('allkeys-lru');
    }
    expect(await redis.keys('evict-refuse*')).toEqual([]);
    await locks.close();
  });

  it("'warn' emits the error once and locks work; 'off' says nothing", async () => {
    const redis = server.client();
    const warned = new LockClient(redis, { prefix: 'evict-warn', evictionCheck: 'warn' });
    const errors: unknown[] = [];
    warned.on('error', (e) => errors.push(e));
    for (let i = 0; i < 3; i++) await (await warned.lock('w').acquire()).release();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(EvictionPolicyError);
    const off = new LockClient(redis, { prefix: 'evict-off', evictionCheck: 'off' });
    off.on('error', (e) => errors.push(e));
    await (await off.lock('o').acquire()).release();
    expect(errors).toHaveLength(1);
    await warned.close();
    await off.close();
  });

  it('a server set to noeviction afterwards is accepted on the next acquisition', async () => {
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: 'evict-fixed' });
    await expect(locks.lock('f').acquire()).rejects.toBeInstanceOf(EvictionPolicyError);
    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    try {
      const lease = await locks.lock('f').acquire();
      expect(lease.isHeld).toBe(true);
      await lease.release();
      // volatile-* policies evict lock hashes (they have a TTL): refused as well.
      await redis.config('SET', 'maxmemory-policy', 'volatile-lru');
      const other = new LockClient(redis, { prefix: 'evict-volatile' });
      await expect(other.lock('v').tryAcquire()).rejects.toThrow('maxmemory-policy volatile-lru');
      await other.close();
    } finally {
      await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
      await locks.close();
    }
  });

  it('a memory limit with noeviction, or an evicting policy without a limit, is fine', async () => {
    const noeviction = await startRedis({ args: ['--maxmemory', '200mb', '--maxmemory-policy', 'noeviction'] });
    const unlimited = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    try {
      for (const s of [noeviction, unlimited]) {
        const locks = new LockClient(s.client(), { prefix: 'evict-ok' });
        await (await locks.lock('ok').acquire()).release();
        await locks.close();
      }
    } finally {
      await noeviction.stop();
      await unlimited.stop();
    }
  });
});
