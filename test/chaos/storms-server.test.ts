import { describe, expect, it } from 'vitest';
import { summarize } from '@holdfast/test-utils/models';
import { deleteLocksStorm, flushAllStorm } from './nemesis/redis-admin.js';
import { redisCrashStorm, redisHangStorm } from './nemesis/redis-process.js';
import { saveReport } from './report.js';
import { TIMEOUT_MS } from './sizes.js';
import { formatLost, runStorm, type StormOutcome } from './storm-run.js';
import { WORKER_CLIENT, workerClients } from './workers.js';

function figures(outcome: StormOutcome): string {
  const { check } = outcome;
  return (
    `${outcome.sections} sections (longest wait ${outcome.maxWaitMs} ms), ${outcome.nemesis.applied} faults: ` +
    `${check.overlaps.length} / ${check.inversions.length} / ${check.staleWrites.length}; ` +
    `lost: ${formatLost(outcome.lost)}; failed: ${formatLost(outcome.failed)}; fenced writes rejected ${check.writesRejected}`
  );
}

const METRIC = 'overlaps / inversions / stale writes accepted; leases lost';

describe('chaos storms on the server', () => {
  it(
    'redis-server frozen 300 ms again and again: no overlap',
    async () => {
      const outcome = await runStorm({ nemesis: ({ server }) => redisHangStorm(server, 300) });
      saveReport({
        id: '13-redis-hang-storm',
        fault: 'redis-server SIGSTOP 300 ms every 300-800 ms (watchdog 1 s)',
        expected: 'calls time out and retry; no overlap; a lease is lost only before its server expiry',
        metric: METRIC,
        result: figures(outcome),
      });
      expect(outcome.unclean).toEqual([]);
      expect(workerClients(outcome.exits)).toEqual([WORKER_CLIENT]);
      expect(outcome.sections).toBeGreaterThan(0);
      expect(outcome.check.overlaps, summarize(outcome.check)).toEqual([]);
      expect(outcome.check.inversions).toEqual([]);
      expect(outcome.check.staleWrites).toEqual([]);
      expect(outcome.keysLeft).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    'SIGKILL + restart with appendfsync always: no overlap, tokens keep increasing',
    async () => {
      const outcome = await runStorm({ server: { persistent: true }, nemesis: ({ server }) => redisCrashStorm(server) });
      saveReport({
        id: '14-redis-crash-durable',
        fault: 'redis-server SIGKILL + restart from its AOF (appendfsync always) every 0.5-1 s',
        expected: 'locks and fence counters survive; no overlap, no inversion',
        metric: METRIC,
        result: figures(outcome),
      });
      expect(outcome.unclean).toEqual([]);
      expect(workerClients(outcome.exits)).toEqual([WORKER_CLIENT]);
      expect(outcome.nemesis.applied).toBeGreaterThan(0);
      expect(outcome.check.overlaps, summarize(outcome.check)).toEqual([]);
      expect(outcome.check.inversions, summarize(outcome.check)).toEqual([]);
      expect(outcome.check.staleWrites).toEqual([]);
      expect(outcome.keysLeft).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    'SIGKILL + restart empty: tokens restart, the checker flags it and the fence rejects the writes',
    async () => {
      const outcome = await runStorm({ nemesis: ({ server }) => redisCrashStorm(server) });
      saveReport({
        id: '15-redis-crash-empty',
        fault: 'redis-server SIGKILL + restart without persistence every 0.5-1 s',
        expected: 'locks and fence counters forgotten: inversions flagged; the fenced resource accepts no stale write',
        metric: METRIC,
        result: figures(outcome),
      });
      expect(outcome.unclean).toEqual([]);
      expect(workerClients(outcome.exits)).toEqual([WORKER_CLIENT]);
      expect(outcome.nemesis.applied).toBeGreaterThan(0);
      expect(outcome.check.inversions.length, summarize(outcome.check)).toBeGreaterThanOrEqual(1);
      expect(outcome.check.staleWrites).toEqual([]);
      expect(outcome.check.acceptedAfterLost).toBe(0);
    },
    TIMEOUT_MS,
  );

  it(
    'DEL of held lock keys: holders told `deleted`, tokens still increasing, no stale write accepted',
    async () => {
      const outcome = await runStorm({
        nemesis: ({ server, prefix }) => deleteLocksStorm(server, prefix),
        worker: { holdMs: [20, 60] },
      });
      saveReport({
        id: '16-del-held-keys',
        fault: '`DEL` of every held lock hash every 100-300 ms (fence counters kept)',
        expected: 'the holder is told `deleted` at its next renewal; overlaps in that window are flagged; the fence holds',
        metric: METRIC,
        result: figures(outcome),
      });
      expect(outcome.unclean).toEqual([]);
      expect(workerClients(outcome.exits)).toEqual([WORKER_CLIENT]);
      expect(outcome.lost.deleted ?? 0).toBeGreaterThanOrEqual(1);
      expect(outcome.check.inversions, summarize(outcome.check)).toEqual([]);
      expect(outcome.check.staleWrites).toEqual([]);
      expect(outcome.check.acceptedAfterLost).toBe(0);
      expect(outcome.keysLeft).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    'FLUSHALL: fence counters gone, inversions flagged, the fence still rejects stale writes',
    async () => {
      const outcome = await runStorm({ nemesis: ({ server }) => flushAllStorm(server), worker: { holdMs: [20, 60] } });
      saveReport({
        id: '17-flushall',
        fault: '`FLUSHALL` every 300-600 ms',
        expected: 'holders told `deleted`; restarted tokens flagged as inversions; no stale write accepted',
        metric: METRIC,
        result: figures(outcome),
      });
      expect(outcome.unclean).toEqual([]);
      expect(workerClients(outcome.exits)).toEqual([WORKER_CLIENT]);
      expect(outcome.check.inversions.length, summarize(outcome.check)).toBeGreaterThanOrEqual(1);
      expect(outcome.check.staleWrites).toEqual([]);
      expect(outcome.check.acceptedAfterLost).toBe(0);
    },
    TIMEOUT_MS,
  );
});
