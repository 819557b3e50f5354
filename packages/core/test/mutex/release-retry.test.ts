import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '@holdfast/core';
import { startRedis, uniqueName, type RedisServer } from '@holdfast/test-utils';
import { delay } from '../helpers.js';

/**
 * The last release reaches a server that is stopped: its call times out and is
 * sent again on the same connection, behind the first. When the server runs
 * again it applies the first (the lock is freed) and answers the second "not
 * held". No reconnection happened, yet that answer is about our own release:
 * not a loss (no `lost`, no throw). Found under load by the read-write lock's
 * AOF crash test, whose 300 ms command timeout ran out.
 */
describe('release sent again after a timeout, on the same connection', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const kinds = {
    mutex: (locks: LockClient, name: string) => locks.lock(name),
    'read-write lock (write side)': (locks: LockClient, name: string) => locks.readWriteLock(name).write,
    'read-write lock (read side)': (locks: LockClient, name: string) => locks.readWriteLock(name).read,
    semaphore: (locks: LockClient, name: string) => locks.semaphore(name, { permits: 2 }),
  };

  for (const [kind, target] of Object.entries(kinds)) {
    it(`${kind}: the release resolves and reports nothing lost`, async () => {
      const redis = server.client();
      // Retries enough that a late answer never exhausts them; 200 ms so the first call times out.
      const locks = new LockClient(redis, { prefix: uniqueName('retried'), commandTimeoutMs: 200, retries: 20 });
      const lost: string[] = [];
      locks.on('lost', ({ reason }) => lost.push(reason));
      locks.on('error', () => undefined);
      try {
        // The scripts loaded first, so the call that waits is the release itself.
        await (await target(locks, 'warm-up').acquire({ leaseMs: 30_000 })).release();
        const lease = await target(locks, 'retried').acquire({ leaseMs: 30_000 });
        server.pause();
        let paused = true;
        let released: string;
        try {
          const releasing = lease.release().then(
            () => 'released',
            (error: unknown) => (error instanceof Error ? error.message : String(error)),
          );
          // Past the 200 ms timeout: the release timer was set before this one, so it has fired.
          await delay(400);
          server.resume();
          paused = false;
          released = await releasing;
        } finally {
          if (paused) server.resume();
        }
        expect(released).toBe('released');
        expect(lost).toEqual([]);
        expect(lease.isHeld).toBe(false);
        const again = await target(locks, 'retried').tryAcquire({ leaseMs: 30_000 });
        expect(again).not.toBeNull();
        await again!.release();
      } finally {
        await locks.close();
        redis.disconnect();
      }
    });
  }
});
