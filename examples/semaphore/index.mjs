// A semaphore with expiring permits: a pool of 3 permits shared by workers that take 1 or 2,
// served first come, first served; a holder that never releases gives its permits back at its
// lease's end; a client given another permit count is refused.
import { LockClient, PermitCountMismatchError } from '@holdfast/core';
import { connect, printEvents, withRedis } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const locks = new LockClient(redis, { prefix: 'example' });
  printEvents(locks, 'pool');
  const pool = locks.semaphore('gpu-pool', { permits: 3 });
  await pool.setPermits(3); // a previous run with another count must not refuse this one

  // Five jobs, at most 3 permits in use at any time.
  let inUse = 0;
  let peak = 0;
  const job = (id, permits) =>
    pool.withLock(
      async (lease) => {
        inUse += lease.permits;
        peak = Math.max(peak, inUse);
        console.log(`job ${id} runs on ${lease.permits} permit(s), token ${lease.token}, in use ${inUse}`);
        await sleep(50);
        inUse -= lease.permits;
      },
      { permits, waitMs: 10_000 },
    );
  await Promise.all([job(1, 2), job(2, 1), job(3, 2), job(4, 1), job(5, 2)]);
  console.log(`peak permits in use: ${peak} of ${pool.permits}`);

  // A holder whose process dies: its client closes without releasing, as a crash would.
  const crashed = new LockClient(redis, { prefix: 'example' });
  await crashed.semaphore('gpu-pool', { permits: 3 }).acquire({ permits: 3, leaseMs: 500 });
  await crashed.close();
  console.log('available after the crash:', await pool.availablePermits());
  const started = performance.now();
  const after = await pool.acquire({ permits: 3, waitMs: 5_000 });
  console.log(`got all 3 permits back ${Math.round(performance.now() - started)} ms later, at the crashed lease's end`);
  await after.release();

  // Another client that believes the pool has 4 permits is refused, never over-admitted.
  const other = new LockClient(redis, { prefix: 'example' });
  const refused = await other.semaphore('gpu-pool', { permits: 4 }).tryAcquire().catch((e) => e);
  console.log('a client with 4 permits:', refused instanceof PermitCountMismatchError ? refused.code : refused);
  console.log('available at the end:', await pool.availablePermits());

  await other.close();
  await locks.close();
  redis.disconnect();
});
