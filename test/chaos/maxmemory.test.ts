import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockClient, isHoldfastError } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { activeHandleCount, activeResources, sleep, startRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { checkHistory, HistoryRecorder } from '@holdfast/test-utils/models';
import { saveReport } from './report.js';
import { TIMEOUT_MS } from './sizes.js';

const TIMEOUT = 600;

describe('chaos: Redis out of memory (maxmemory with noeviction)', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis({ args: ['--maxmemory-policy', 'noeviction'] });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(
    'keeps renewing a held lease, refuses new ones with an error, and recovers when memory is back',
    async () => {
      const handlesBefore = activeHandleCount();
      const prefix = uniqueName('chaos');
      const admin = server.client();
      const redis = server.client();
      const locks = new LockClient(redis, { prefix, commandTimeoutMs: 500 });
      const dog = new Watchdog(locks, { timeoutMs: TIMEOUT });
      dog.on('error', () => {});
      locks.on('error', () => {});
      const history = new HistoryRecorder();
      locks.on('lost', ({ reason, name }) => history.record('holder', name, 'lost', { reason }));
      let oom = false;
      let renewedDuringOom = 0;
      dog.on('renewed', ({ count, lost }) => {
        if (oom && lost === 0) renewedDuringOom += count;
      });

      history.record('holder', 'held', 'acquire-invoke');
      const lease = await locks.lock('held').acquire();
      history.record('holder', 'held', 'acquire-ok', { token: lease.token, holdCount: 1 });
      await admin.config('SET', 'maxmemory', '1');
      oom = true;
      const otherRedis = server.client();
      const other = new LockClient(otherRedis, { prefix, commandTimeoutMs: 500, retries: 0 });
      const refusals: string[] = [];
      for (const name of ['held', 'free']) {
        try {
          const got = await other.lock(name).tryAcquire({ leaseMs: 5_000 });
          refusals.push(got === null ? 'busy' : `granted ${name}`);
        } catch (error) {
          refusals.push(isHoldfastError(error) && /OOM/.test(error.message) ? 'OOM' : String(error));
        }
      }
      await sleep(3 * TIMEOUT);
      oom = false;
      await admin.config('SET', 'maxmemory', '0');
      history.record('holder', 'held', 'release-invoke', { holdCount: 1 });
      await lease.release();
      const after = await other.lock('free').tryAcquire({ leaseMs: 5_000 });
      await after?.release();
      await other.close();
      await locks.close();
      for (const client of [admin, redis, otherRedis]) client.disconnect();
      const check = checkHistory(history.events);
      saveReport({
        id: '18-maxmemory-noeviction',
        fault: '`maxmemory 1` with `noeviction` while a renewed lease is held',
        expected: 'renewals (PEXPIRE) go on; new acquisitions fail with OOM, never granted; recovered afterwards',
        metric: 'renewals during OOM / tryAcquire of held and free lock / leases lost',
        result: `${renewedDuringOom} / ${refusals.join(', ')} / ${check.tenures.filter((s) => s.lostAt !== undefined).length}`,
      });
      expect(refusals[0]).toMatch(/^(busy|OOM)$/);
      expect(refusals[1]).toBe('OOM');
      expect(renewedDuringOom).toBeGreaterThanOrEqual(2);
      expect(check.tenures.filter((s) => s.lostAt !== undefined)).toEqual([]);
      expect(after).not.toBeNull();
      await waitFor(() => activeHandleCount() <= handlesBefore, {
        message: () => `handles left after close(): ${activeResources().join(', ')}`,
      });
    },
    TIMEOUT_MS,
  );
});
