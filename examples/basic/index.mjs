// Basic use: acquire with a wait, tryAcquire, a waiter woken by the release, inspection.
import { LockClient, LockTimeoutError } from '@holdfast/core';
import { connect, printEvents, withRedis } from '../shared/redis.mjs';

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const alice = new LockClient(redis, { prefix: 'example' });
  const bob = new LockClient(redis, { prefix: 'example' });
  printEvents(alice, 'alice');
  printEvents(bob, 'bob');

  const lock = alice.lock('report:2026-11');
  const lease = await lock.acquire({ leaseMs: 10_000 });
  console.log(`alice holds ${lease.name} with token ${lease.token}; ttl ${await lock.remainingTtlMs()} ms`);

  console.log('bob tries without waiting:', await bob.lock('report:2026-11').tryAcquire());
  const timedOut = await bob.lock('report:2026-11').acquire({ waitMs: 200 }).catch((e) => e);
  console.log('bob waits 200 ms:', timedOut instanceof LockTimeoutError ? timedOut.message : timedOut);

  const bobWaits = bob.lock('report:2026-11').acquire({ waitMs: 5_000 });
  setTimeout(() => lease.release(), 100);
  const started = performance.now();
  const bobs = await bobWaits;
  console.log(`bob got it ${Math.round(performance.now() - started)} ms after starting to wait, token ${bobs.token}`);
  await bobs.release();
  console.log('locked now?', await lock.isLocked());

  await alice.close();
  await bob.close();
  redis.disconnect();
});
