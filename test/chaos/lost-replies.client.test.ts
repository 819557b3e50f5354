import { describe, expect, it } from 'vitest';
import { LockClient } from '@holdfast/core';
import { lockKeys } from '@holdfast/core/internal';
import { activeHandleCount, activeResources, lockFields, uniqueName, useProxiedServer, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { saveReport } from './report.js';
import { SIZES, TIMEOUT_MS } from './sizes.js';

/** Hold counts the server keeps for the lock (in either layout): owner field → count. */
async function serverCounts(admin: Redis, key: string): Promise<number[]> {
  const hash = await lockFields(admin, key);
  return Object.entries(hash)
    .filter(([field]) => !field.startsWith('@'))
    .map(([, count]) => Number(count));
}

type Step = 'outer-acquire' | 'reentry' | 'inner-release' | 'outer-release';
const STEPS: Step[] = ['outer-acquire', 'reentry', 'inner-release', 'outer-release'];

describe('chaos: replies lost after Redis applied the command (ioredis resends)', () => {
  // A redis-server of this block's own, with a FaultProxy in front.
  const fx = useProxiedServer();

  it(
    'keeps hold counts exact when the reply of an acquire, re-entry or release is dropped',
    async () => {
      const handlesBefore = activeHandleCount();
      const prefix = uniqueName('chaos');
      const admin = fx.server.client();
      const redis = fx.throughProxy();
      const locks = new LockClient(redis, { prefix, leaseMs: 10_000, commandTimeoutMs: 2_000 });
      locks.on('error', () => {});
      const lost: string[] = [];
      locks.on('lost', ({ reason }) => lost.push(reason));
      const failures: string[] = [];
      const trials = SIZES.lostReplyTrials;
      let dropped = 0;
      for (let trial = 0; trial < trials; trial++) {
        const step = STEPS[trial % STEPS.length]!;
        const name = `replies-${trial}`;
        const key = lockKeys(prefix, name).lock;
        const lock = locks.lock(name);
        const seen: string[] = [];
        const expect = async (label: string, counts: number[]) => {
          const actual = await serverCounts(admin, key);
          if (JSON.stringify(actual) !== JSON.stringify(counts)) seen.push(`${label}: server ${JSON.stringify(actual)}`);
        };
        const drop = (at: Step) => {
          if (at === step) void fx.proxy.dropNextReply().then(() => dropped++);
        };
        drop('outer-acquire');
        await lock.withLock(async (outer) => {
          if (outer.holdCount !== 1) seen.push(`outer holdCount ${outer.holdCount}`);
          await expect('after acquire', [1]);
          drop('reentry');
          await lock.withLock(async (inner) => {
            if (inner.holdCount !== 2 || inner.token !== outer.token) seen.push(`inner ${inner.holdCount}/${inner.token}`);
            await expect('after re-entry', [2]);
            drop('inner-release');
          });
          await expect('after inner release', [1]);
          drop('outer-release');
        });
        await expect('after outer release', []);
        if (seen.length > 0) failures.push(`trial ${trial} (${step}): ${seen.join('; ')}`);
      }
      await locks.close();
      redis.disconnect();
      admin.disconnect();
      saveReport({
        id: '04-lost-replies',
        fault: 'proxy drops the reply of an applied acquire / re-entry / release and closes the connection',
        expected: 'hold counts exact; the resend is recognised by its request id',
        metric: 'trials with exact hold counts',
        result: `${trials - failures.length}/${trials} (${dropped} replies dropped)`,
      });
      expect(dropped).toBe(trials);
      expect(failures).toEqual([]);
      expect(lost).toEqual([]);
      await waitFor(() => activeHandleCount() <= handlesBefore, {
        message: () => `handles left after close(): ${activeResources().join(', ')}`,
      });
    },
    TIMEOUT_MS,
  );
});
