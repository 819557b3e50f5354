import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startRedis, uniqueName, waitFor } from '@holdfast/test-utils';
import { checkHistory, summarize, type CheckResult, type Overlap, toLine, type HistoryEvent } from '@holdfast/test-utils/models';
import { mixedStorm, type FaultRecord } from './nemesis/mixed.js';
import type { Nemesis } from './nemesis/storm.js';
import { RESULTS_DIR, saveReport } from './report.js';
import { FULL, TIMEOUT_MS } from './sizes.js';
import { formatLost } from './storm-run.js';
import { keysLeft, runFleet, sectionsCompleted } from './support.js';
import { assertBuilt, cleanExit, WORKER_CLIENT, workerClients, type WorkerConfig } from './workers.js';

/** Sizes of this scenario: CI fits `pnpm test`'s minute, full runs under `pnpm chaos`. */
// exitTimeoutMs: a worker that does not exit by itself is killed and reported (with its stderr)
// well inside the test's own timeout, rather than the test timing out with nothing to read.
const SIZE = FULL ? { processes: 4, stormMs: 60_000, exitTimeoutMs: 120_000 } : { processes: 2, stormMs: 6_000, exitTimeoutMs: 30_000 };

/**
 * The two ways users build the lock client's connection: ioredis defaults
 * (a command fails after 20 reconnection attempts) and
 * `maxRetriesPerRequest: null` (commands wait in the offline queue through
 * any outage, then go out on the new connection).
 */
const VARIANTS: { name: string; redisOptions: Record<string, unknown> }[] = [
  { name: 'defaults', redisOptions: {} },
  { name: 'maxRetriesPerRequest null', redisOptions: { maxRetriesPerRequest: null } },
];

const ms = (ns: bigint) => Number(ns / 1_000n) / 1_000;

/**
 * A flagged overlap with what surrounds it: both holders' events from a lease
 * before the later acquisition to just after it, and the faults in that window.
 */
function describeOverlap(overlap: Overlap, history: readonly HistoryEvent[], faults: readonly FaultRecord[]): string {
  const { earlier, later } = overlap;
  const from = later.start - 1_500_000_000n;
  const to = later.start + 300_000_000n;
  const rel = (t: bigint) => `${ms(t - later.start).toFixed(3)} ms`;
  const events = history
    .filter((e) => e.t >= from && e.t <= to && (e.holder === earlier.holder || e.holder === later.holder || e.type === 'lost'))
    .map((e) => `  ${rel(e.t)} ${e.holder} ${e.lock} ${e.type}${e.token !== undefined ? ` #${e.token}` : ''}${e.holdCount !== undefined ? ` x${e.holdCount}` : ''}${e.reason ? ` ${e.reason}` : ''}`);
  const around = faults
    .filter((f) => f.end >= from && f.start <= to)
    .map((f) => `  ${rel(f.start)} .. ${rel(f.end)} ${f.kind}${f.detail ? ` ${f.detail}` : ''}${f.ok ? '' : ' (failed)'}`);
  return [
    `overlap on ${overlap.lock}: ${earlier.holder}#${earlier.token} [${rel(earlier.start)} .. ${rel(earlier.end)}], lost ${earlier.lostAt === undefined ? 'never' : rel(earlier.lostAt)}` +
      ` / ${later.holder}#${later.token} from 0 (by ${ms(earlier.end - later.start).toFixed(3)} ms)`,
    'events:',
    ...events,
    'faults:',
    ...around,
  ].join('\n');
}

/** Keeps a run's history and faults for reading (`.chaos-results/`, not committed). */
function keepEvidence(history: readonly HistoryEvent[], faults: readonly FaultRecord[], check: CheckResult): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = `${RESULTS_DIR}mixed-nemesis-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`;
  const faultLines = faults.map((f) => JSON.stringify({ ...f, start: f.start.toString(), end: f.end.toString(), type: 'fault' }));
  writeFileSync(file, `${[...history.map(toLine), ...faultLines].join('\n')}\n`);
  const text = check.overlaps.map((o) => describeOverlap(o, history, faults)).join('\n\n');
  writeFileSync(file.replace(/\.jsonl$/, '.txt'), `${summarize(check)}\n\n${text}\n`);
  return file;
}

describe('chaos: mixed faults over both client option variants', () => {
  it(
    'crash + restart from AOF, server and worker freezes, CLIENT KILL pubsub, SCRIPT FLUSH, maxmemory: no overlap, tokens increasing, no stale write',
    async () => {
      assertBuilt();
      const server = await startRedis({ persistent: true, args: ['--maxmemory-policy', 'noeviction'] });
      const resourceServer = await startRedis();
      const faults: FaultRecord[] = [];
      try {
        const prefix = uniqueName('chaos');
        const configs: WorkerConfig[] = Array.from({ length: SIZE.processes }, (_, p) => ({
          proc: `p${p}`,
          redisUrl: server.url,
          resourceUrl: resourceServer.url,
          prefix,
          workers: 2,
          durationMs: SIZE.stormMs + 1_000,
          locks: ['m1', 'm2'],
          watchdogMs: 1_000,
          waitMs: 3_000,
          holdMs: [0, 5],
          reentryRate: 0.1,
          commandTimeoutMs: 500,
          redisOptions: VARIANTS[p % VARIANTS.length]!.redisOptions,
        }));
        let nemesis: Nemesis | undefined;
        const { history, exits } = await runFleet(configs, async (workers) => {
          // Faults start once every worker process works (see storm-run.ts).
          const working = (e: HistoryEvent) => e.type === 'acquire-ok';
          await Promise.all(workers.map((w) => (w.events.some(working) ? undefined : w.next(working))));
          nemesis = mixedStorm({ server, workers }, faults);
          await new Promise((resolve) => setTimeout(resolve, SIZE.stormMs));
          await nemesis.stop();
        }, SIZE.exitTimeoutMs);
        const check = checkHistory(history);
        const admin = server.client();
        let left: string[] = [];
        // Leases given up under faults run out by their TTL (the watchdog's 1 s).
        await waitFor(async () => (left = await keysLeft(admin, prefix)).length === 0, { timeoutMs: 5_000 }).catch(() => {});
        const lost = tally(history.filter((e) => e.type === 'lost'));
        const failed = tally(history.filter((e) => e.type === 'acquire-fail'));
        const byKind = tally(faults.filter((f) => f.ok).map((f) => ({ reason: f.kind })));
        const flagged = check.overlaps.length + check.inversions.length + check.staleWrites.length > 0;
        // Full runs keep every history: the leases lost and the failures are read too.
        const evidence = flagged || FULL ? keepEvidence(history, faults, check) : undefined;
        saveReport({
          id: '19-mixed-faults',
          fault:
            'at once, each on its own clock: redis-server SIGKILL + restart from its AOF every 0.8-2 s, redis-server SIGSTOP 100-400 ms, ' +
            'worker SIGSTOP 50-250 ms, `CLIENT KILL TYPE pubsub`, `SCRIPT FLUSH`, `maxmemory 1` (noeviction) for 100-400 ms; ' +
            'half the worker processes with ioredis defaults, half with `maxRetriesPerRequest: null`',
          expected: 'no overlap, tokens increasing, no stale write accepted; leases lost only on the safe side',
          metric: 'overlaps / inversions / stale writes accepted; leases lost',
          result:
            `${sectionsCompleted(history)} sections, ${faults.filter((f) => f.ok).length} faults (${formatLost(byKind)}): ` +
            `${check.overlaps.length} / ${check.inversions.length} / ${check.staleWrites.length}; lost: ${formatLost(lost)}; failed: ${formatLost(failed)}`,
        });
        const detail = `${summarize(check)}${evidence ? ` (history kept in ${evidence})` : ''}\n${check.overlaps
          .slice(0, 3)
          .map((o) => describeOverlap(o, history, faults))
          .join('\n\n')}`;
        expect(exits.filter((exit) => !cleanExit(exit))).toEqual([]);
        expect(workerClients(exits)).toEqual([WORKER_CLIENT]);
        expect(sectionsCompleted(history)).toBeGreaterThan(0);
        expect(faults.filter((f) => f.ok).length).toBeGreaterThan(0);
        expect(check.overlaps, detail).toEqual([]);
        expect(check.inversions, detail).toEqual([]);
        expect(check.staleWrites, detail).toEqual([]);
        expect(check.acceptedAfterLost).toBe(0);
        expect(left).toEqual([]);
      } finally {
        await Promise.all([server.stop(), resourceServer.stop()]);
      }
    },
    TIMEOUT_MS,
  );
});

function tally(events: readonly { reason?: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.reason ?? '?'] = (counts[e.reason ?? '?'] ?? 0) + 1;
  return counts;
}
