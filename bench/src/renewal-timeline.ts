import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedis } from '@holdfast/test-utils';
import { settleHeap } from './heap.js';
import { RENEWAL_LIBRARIES } from './renewal-holders.js';

/**
 * `pnpm --filter @holdfast/bench run bench:renewal-timeline [-- LIB]`: why
 * scenario 5 waits before its window. Holds 2000 renewed leases of one
 * library (default holdfast) in this process, as the renewal child does, and
 * prints the CPU share of every 2 s after the burst of acquisitions, with the
 * full (mark-compact) collections in each. The first ~25 s carry one-off
 * collections of the burst (V8's memory reducer among them); the measured
 * window has to start after them to show what renewing costs.
 */

const libId = process.argv[2] ?? 'holdfast';
const LEASES = 2000;
const TIMEOUT_MS = 3000;
const STEP_MS = 2000;
const STEPS = 20;

const lib = RENEWAL_LIBRARIES.find((l) => l.id === libId);
if (!lib) throw new Error(`Unknown renewal library ${libId}; one of ${RENEWAL_LIBRARIES.map((l) => l.id).join(', ')}`);

let majors: number[] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors.push(Math.round(entry.duration * 10) / 10);
  }
});

const server = await startRedis();
try {
  const names = Array.from({ length: LEASES }, (_, i) => `timeline-${i}`);
  const holding = await lib.hold(server.port, names, TIMEOUT_MS);
  // As the renewal child does once the burst is over.
  await settleHeap();
  observer.observe({ entryTypes: ['gc'] });
  console.log(`${lib.label}: ${LEASES} leases, ${TIMEOUT_MS} ms timeout; CPU per ${STEP_MS / 1000} s after the burst`);
  console.log('| seconds after the burst | client CPU | full collections (ms) |');
  console.log('| --- | --- | --- |');
  for (let step = 0; step < STEPS; step++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await sleep(STEP_MS);
    const cpu = process.cpuUsage(cpu0);
    const pct = ((cpu.user + cpu.system) / 1000 / (performance.now() - t0)) * 100;
    const from = (step * STEP_MS) / 1000;
    console.log(`| ${from}–${from + STEP_MS / 1000} | ${pct.toFixed(2)} % | ${majors.join(', ')} |`);
    majors = [];
  }
  observer.disconnect();
  console.log(`lost: ${holding.lost()}`);
  await holding.releaseAll();
  await holding.close();
} finally {
  await server.stop();
}
