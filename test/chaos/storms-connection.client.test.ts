import { describe, expect, it } from 'vitest';
import { summarize } from '@holdfast/test-utils/models';
import { proxyStorm } from './nemesis/proxy.js';
import { clientKillStorm, scriptFlushStorm } from './nemesis/redis-admin.js';
import { saveReport } from './report.js';
import { TIMEOUT_MS } from './sizes.js';
import { formatLost, runStorm, type StormOutcome } from './storm-run.js';
import { WORKER_CLIENT, workerClients } from './workers.js';

/** What every storm that loses no lock must show. */
function expectSafe(outcome: StormOutcome): void {
  expect(outcome.unclean).toEqual([]);
  expect(workerClients(outcome.exits)).toEqual([WORKER_CLIENT]);
  expect(outcome.sections).toBeGreaterThan(0);
  expect(outcome.check.overlaps, summarize(outcome.check)).toEqual([]);
  expect(outcome.check.inversions, summarize(outcome.check)).toEqual([]);
  expect(outcome.check.staleWrites).toEqual([]);
  expect(outcome.check.acceptedAfterLost).toBe(0);
  expect(outcome.keysLeft).toEqual([]);
}

function figures(outcome: StormOutcome): string {
  const { check } = outcome;
  return (
    `${outcome.sections} sections (longest wait ${outcome.maxWaitMs} ms), ${outcome.nemesis.applied} faults: ` +
    `${check.overlaps.length} / ${check.inversions.length} / ${check.staleWrites.length}; lost: ${formatLost(outcome.lost)}; failed: ${formatLost(outcome.failed)}`
  );
}

const METRIC = 'overlaps / inversions / stale writes accepted; leases lost';

describe('chaos storms on the connection', () => {
  it(
    'CLIENT KILL storm: no overlap, tokens increasing',
    async () => {
      const outcome = await runStorm({ nemesis: ({ server }) => clientKillStorm(server) });
      saveReport({
        id: '10-client-kill-storm',
        fault: '`CLIENT KILL TYPE normal` + `TYPE pubsub` every 50-250 ms',
        expected: 'resends recognised, waiters re-subscribe; no overlap',
        metric: METRIC,
        result: figures(outcome),
      });
      expectSafe(outcome);
    },
    TIMEOUT_MS,
  );

  it(
    'SCRIPT FLUSH storm: no overlap, every call falls back to EVAL',
    async () => {
      const outcome = await runStorm({ nemesis: ({ server }) => scriptFlushStorm(server) });
      saveReport({
        id: '11-script-flush-storm',
        fault: '`SCRIPT FLUSH` every 10-50 ms',
        expected: 'NOSCRIPT answered by EVAL; no overlap, no lease lost',
        metric: METRIC,
        result: figures(outcome),
      });
      expectSafe(outcome);
      expect(outcome.lost).toEqual({});
    },
    TIMEOUT_MS,
  );

  it(
    'proxy storm (latency, 200 ms blackholes, resets, replies dropped after apply): no overlap',
    async () => {
      const outcome = await runStorm({ viaProxy: true, nemesis: ({ proxy }) => proxyStorm(proxy!) });
      saveReport({
        id: '12-proxy-storm',
        fault: 'proxy: 0-40 ms latency, 200 ms blackhole then reset, RST, reply dropped after apply; every 100-300 ms',
        expected: 'no overlap; leases outlive short faults (watchdog 1 s)',
        metric: METRIC,
        result: figures(outcome),
      });
      expectSafe(outcome);
    },
    TIMEOUT_MS,
  );
});
