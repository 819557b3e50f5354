import { LockClient, LockLostError, RedisCommandError } from '@holdfast/core';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Releases whose outcome is not the plain one, found by the mixed-fault chaos
 * scenario: a nested release that fails, and a release asked for in time but
 * answered after the lease ran out.
 */
describe('release outcomes', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ args: ['--maxmemory-policy', 'noeviction'] });
  });
  afterAll(() => server?.stop());

  it('a nested release that fails (OOM) still lets the outer release free the lock', async () => {
    const redis = server.client();
    const admin = server.client();
    const locks = new LockClient(redis, { prefix: 'nested-fail' });
    const lock = locks.lock('n');
    let nested: unknown;
    await lock.withLock(async () => {
      nested = await lock
        .withLock(async () => {
          // Every write is refused from here on: the nested release fails.
          await admin.config('SET', 'maxmemory', '1');
        })
        .catch((e: unknown) => e);
      await admin.config('SET', 'maxmemory', '0');
    });
    expect(nested).toBeInstanceOf(RedisCommandError);
    expect((nested as Error).message).toMatch(/OOM/);
    // Redis still counted two holds; the outer (last) release dropped them all.
    expect(locks.heldCount).toBe(0);
    expect(await lock.isLocked()).toBe(false);
    await locks.close();
    redis.disconnect();
    admin.disconnect();
  });

  it('a release asked for within the lease but answered after it ran out is a release, not a loss', async () => {
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: 'late-answer' });
    const lost: string[] = [];
    locks.on('lost', ({ reason }) => lost.push(reason));
    const lock = locks.lock('l');
    const result = await lock.withLock(
      async () => {
        await new Promise((r) => setTimeout(r, 50));
        // The server freezes as the section ends: the release is answered after the lease.
        await server.pause();
        setTimeout(() => void server.resume(), 1_000);
        return 'done';
      },
      { leaseMs: 500 },
    );
    expect(result).toBe('done');
    expect(lost).toEqual([]);
    expect(await lock.isLocked()).toBe(false);
    await locks.close();
    redis.disconnect();
  });

  it('a lock deleted while the lease runs is still reported lost on release', async () => {
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: 'deleted' });
    const lease = await locks.lock('d').acquire({ leaseMs: 10_000 });
    await redis.del(locks.lock('d').keys.lock);
    const error = await lease.release().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/removed from Redis/);
    expect(error).not.toBeInstanceOf(LockLostError);
    await locks.close();
    redis.disconnect();
  });
});
