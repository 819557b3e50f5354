import { LockClient } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * ioredis `keyPrefix` is applied to the keys a script gets and to the
 * channels the client subscribes to, but not to what a script publishes:
 * waiters listened on `<keyPrefix><channel>` while releases went to
 * `<channel>`, so no wake-up ever came and a waiter slept out the holder's lease.
 */
describe('an ioredis client with keyPrefix', () => {
  const fx = useRedis();

  it('hands the lock to the next waiter on release, long before the lease would end', async () => {
    const server = await fx.server();
    const redis = server.client({ keyPrefix: 'app:' });
    const locks = new LockClient(redis, { prefix: fx.prefix });
    const errors: unknown[] = [];
    locks.on('error', (e) => errors.push(e));
    try {
      const lock = locks.lock('kp-handoff');
      let sections = 0;
      // 8 tasks, 60 s leases, 20 s waits: every section but the first needs a release message.
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 10; i++) {
            await lock.withLock(async () => {
              sections++;
              await delay(1);
            }, { leaseMs: 60_000, waitMs: 20_000 });
          }
        }),
      );
      expect(sections).toBe(80);
      // The keys are where ioredis put them: under the keyPrefix.
      const plain = await fx.redis();
      const lease = await lock.acquire();
      expect(await plain.exists(`app:${lock.keys.lock}`)).toBe(1);
      expect(await plain.exists(lock.keys.lock)).toBe(0);
      await lease.release();
      expect(errors).toEqual([]);
    } finally {
      await locks.close();
      redis.disconnect();
    }
  });

  it('two key prefixes on one Redis are two separate sets of locks', async () => {
    const server = await fx.server();
    const a = server.client({ keyPrefix: 'a:' });
    const b = server.client({ keyPrefix: 'b:' });
    const la = new LockClient(a, { prefix: fx.prefix });
    const lb = new LockClient(b, { prefix: fx.prefix });
    try {
      const held = await la.lock('shared-name').acquire();
      const other = await lb.lock('shared-name').tryAcquire();
      expect(other).not.toBeNull();
      await other!.release();
      await held.release();
    } finally {
      await la.close();
      await lb.close();
      a.disconnect();
      b.disconnect();
    }
  });
});
