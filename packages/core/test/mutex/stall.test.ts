import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient } from '@holdfast/core';
import { sleep, startRedis, uniqueName, type RedisServer } from '@holdfast/test-utils';

/**
 * After an event-loop stall longer than the lease (GC pause, SIGSTOP), a timer
 * due before the lease deadline runs before the deadline timer. The code it
 * resumes must already see the lease lost (`signal` aborted, `isHeld` false,
 * `lost` emitted), or it would send a write with a stale token. Found by the
 * client-pause scenario of the fault-injection suite.
 */
describe('lease state right after an event-loop stall', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('reports the lease lost to code resumed after a stall past its deadline', async () => {
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: uniqueName('stall') });
    const lost: string[] = [];
    locks.on('lost', ({ reason }) => lost.push(reason));
    try {
      const lease = await locks.lock('stalled').acquire({ leaseMs: 200 });
      const shortSleep = sleep(20);
      // A synchronous stall of 2× the lease, as a frozen process sees it on resume.
      const until = performance.now() + 400;
      while (performance.now() < until) {
        // busy
      }
      await shortSleep;
      const seen = { aborted: lease.signal.aborted, isHeld: lease.isHeld, lostSoFar: [...lost] };
      expect(seen).toEqual({ aborted: true, isHeld: false, lostSoFar: ['expired'] });
    } finally {
      await locks.close();
      redis.disconnect();
    }
  });
});
