import { warmupSections, type ContentionResult } from './scenario-contention.js';
import type { UncontendedResult } from './scenario-uncontended.js';
import { READ_WRITE_WORKERS } from './scenario-read-write.js';
import { SEMAPHORE_PERMITS } from './scenario-semaphore.js';
import { saturationSection } from './report-saturation.js';
import { holdersSection } from './report-holders.js';
import { fmt, pct, markdownTable } from './stats.js';
import type { BenchReport, SuiteResult } from './suite.js';

/** The markdown written next to the JSON: every figure of every run, as tables. */

const table = (head: string[], rows: string[][]): string => markdownTable(head, rows).join('\n');

function uncontendedTable(results: readonly UncontendedResult[]): string {
  return table(
    ['Library', 'p50 µs', 'p99 µs', '× floor (p50)', 'spread between rounds', 'client CPU µs / cycle', '× floor (client CPU)', 'CPU spread', 'client cmds / cycle', 'server calls / cycle', 'server CPU µs / cycle', 'client commands', 'errors'],
    results.map((r) => [
      r.label,
      fmt(r.p50Us, 0),
      fmt(r.p99Us, 0),
      fmt(r.ratio, 2),
      pct(r.spreadPct),
      fmt(r.cpuUsPerCycle, 1),
      fmt(r.cpuRatio, 2),
      pct(r.cpuSpreadPct),
      fmt(r.clientPerCycle, 2),
      fmt(r.serverPerCycle, 2),
      fmt(r.serverUsPerCycle, 1),
      r.clientDetail,
      String(r.errors),
    ]),
  );
}

function errorsText(errors: Record<string, number>): string {
  const entries = Object.entries(errors);
  return entries.length ? entries.map(([name, n]) => `${name} ×${n}`).join(', ') : '';
}

function contentionTable(results: readonly ContentionResult[]): string {
  return table(
    [
      'Library',
      'sections',
      'sections/s',
      'utilisation',
      'hand-off → other p50 / p99 ms',
      'to another worker',
      'wait p50 / p99 / max ms',
      'per worker min–max',
      'starved',
      'overlaps (flag / time)',
      'gave up',
      'client cmds / section',
      'server calls / section',
      'server CPU µs / section',
      'client commands / section',
    ],
    results.map((r) => [
      r.label,
      `${r.sections}/${r.target}${r.capped ? ' capped' : ''}${r.warmedUp ? '' : ', warm-up incl.'}${r.drainTimedOut ? ', drain timed out' : ''}`,
      fmt(r.throughput, 0),
      fmt(r.utilisation, 2),
      `${fmt(r.handoffOther.p50)} / ${fmt(r.handoffOther.p99)}`,
      pct(r.otherShare * 100),
      `${fmt(r.wait.p50)} / ${fmt(r.wait.p99)} / ${fmt(r.wait.max)}`,
      `${r.minPerWorker}–${r.maxPerWorker}`,
      String(r.starved),
      `${r.overlapsFlag} / ${r.overlapsByTime}`,
      r.gaveUp ? `${r.gaveUp} (${errorsText(r.errors)})` : '0',
      fmt(r.clientPerSection, 2),
      fmt(r.serverPerSection, 1),
      fmt(r.serverUsPerSection, 0),
      r.clientDetail,
    ]),
  );
}

function contentionSections(title: string, results: readonly ContentionResult[] | undefined): string[] {
  if (!results?.length) return [];
  const out: string[] = [];
  for (const mode of ['no-pause', 'pause'] as const) {
    const rows = results.filter((r) => r.mode === mode);
    if (!rows.length) continue;
    const first = rows[0]!;
    const what = mode === 'pause' ? `forced hand-offs (${first.pauseMs} ms pause after each release)` : 'no pause between sections';
    out.push(`#### ${title}: ${what}, ${first.workers} workers × ${first.processes} process${first.processes > 1 ? 'es' : ''}`, '', contentionTable(rows), '');
  }
  return out;
}

function runSections(run: SuiteResult, report: BenchReport): string[] {
  const s = report.sizes;
  const out: string[] = [];
  if (run.uncontended) {
    out.push(
      '### 1–2. Uncontended acquire + release (one key, sequential)',
      '',
      `${s.cycles} cycles per library and round after ${s.warmupCycles} warm-up, libraries taking turns in blocks of ${Math.ceil(s.cycles / 8)} cycles; ` +
        `${s.latencyRounds} rounds. p50/p99: median over the rounds; "× floor": p50 over the floor's p50 of the same round, median over the rounds. ` +
        'Client CPU: user + system CPU of the bench process (`process.cpuUsage`) over the library\'s blocks, per cycle (ioredis, timers and GC included), median over the rounds; "× floor (client CPU)": over the floor\'s of the same round; CPU spread: between the rounds\' ratios. ' +
        'Server CPU: the server main thread\'s CPU (INFO cpu) over the library\'s blocks, per cycle: its commands, scripts and network I/O. ' +
        'Server instructions per cycle, which do not move with the machine\'s load: `pnpm --filter @holdfast/bench run bench:callgrind` (results/callgrind.md).',
      '',
      uncontendedTable(run.uncontended),
      '',
    );
  }
  if (run.contention || run.multiprocess) {
    out.push(
      '### 3. Contention on one key',
      '',
      `${s.sections} sections of ${s.sectionMs} ms (a timer, then a spin that yields to the event loop, for an exact length), after ${warmupSections(s.workers)} warm-up sections; capped at ${s.contentionCapMs / 1000} s per run. ` +
        'Hand-off → other: release by worker X to acquisition by worker Y ≠ X. Wait: from the first attempt to acquisition, retries after a give-up included. ' +
        'Commands per section: everything sent in the measured window (failed attempts, drain after the stop) divided by all acquisitions in it. ' +
        'Overlaps: shared in-process flag / from the timestamps (0.2 ms slack across processes).',
      '',
      ...contentionSections('In one process', run.contention),
      ...contentionSections('Across processes', run.multiprocess),
    );
  }
  if (run.redlock) {
    out.push('### 4. Redlock over independent instances', '');
    for (const group of run.redlock.uncontended) {
      out.push(
        `#### Uncontended, ${group.instances} instances (${s.redlockCycles} cycles per library and round, in turns of ${Math.ceil(s.redlockCycles / 8)}, ${s.latencyRounds} rounds; commands summed over instances)`,
        '',
        uncontendedTable(group.results),
        '',
      );
    }
  }
  if (run.renewal) {
    out.push(
      `### 5. ${s.renewalLeases} leases held ${s.renewalHoldMs / 1000} s with automatic renewal (lease / lock timeout ${s.renewalTimeoutMs} ms for every library)`,
      '',
      'Redis B / lock (keys): `MEMORY USAGE` of every key plus the main and expires hash tables (`MEMORY STATS`), per held lock; used_memory Δ also counts the connection buffers left by the burst of acquisitions.',
      '',
      table(
        ['Library', 'client cmds/s', 'server calls/s', 'client CPU', 'same process idle', 'RSS Δ MB', 'heap Δ MB', 'Redis B / lock (keys)', 'used_memory Δ / lock', 'held at end', 'lost', 'client commands/s', 'settings'],
        run.renewal.map((r) => [
          r.label,
          fmt(r.clientPerSec, 1),
          fmt(r.serverPerSec, 0),
          pct(r.cpuPct),
          pct(r.idleCpuPct),
          fmt(r.rssDeltaMb, 1),
          fmt(r.heapDeltaMb, 1),
          fmt(r.bytesPerLock, 0),
          r.usedMemoryPerLock === undefined ? '' : fmt(r.usedMemoryPerLock, 0),
          `${r.heldAtEnd}/${r.leases}`,
          String(r.lost),
          r.clientDetail,
          r.settings + (r.stray ? `; ${r.stray} errors from its own timers` : ''),
        ]),
      ),
      '',
    );
  }
  out.push(...semaphoreSections(run, report), ...readWriteSections(run, report), ...saturationSection(run.saturation), ...holdersSection(run.holders));
  return out;
}

function semaphoreSections(run: SuiteResult, report: BenchReport): string[] {
  if (!run.semaphore) return [];
  const s = report.sizes;
  const { results, memory } = run.semaphore;
  const ratio = (v: number) => (Number.isNaN(v) ? '' : fmt(v, 2));
  const out = [
    `### 6. Semaphore, ${SEMAPHORE_PERMITS} permits: holdfast beside redis-semaphore`,
    '',
    `Uncontended: one worker acquires one permit and releases it, ${s.semaphoreCycles} cycles after 100 warm-up. ` +
      `Forced hand-offs: ${s.workers} workers (each its own connection and client) over ${SEMAPHORE_PERMITS} permits, ${s.semaphoreSections} sections of ${s.sectionMs} ms, each worker asking again at once. ` +
      `Utilisation: time permits were held / (${SEMAPHORE_PERMITS} × wall time). Hand-off gap: a release's invocation to the next start (starts matched to the earliest unmatched release). ` +
      `Wait: \`acquire()\` to the start. ${s.latencyRounds} rounds, libraries in turn; figures: median over the rounds; "× redis-semaphore": over its figure of the same round, median over the rounds.`,
    '',
    table(
      ['Library', 'uncontended p50 / p99 µs', '× redis-semaphore (p50)', 'client / server cmds / cycle', 'utilisation', '× redis-semaphore (utilisation)', 'hand-off gap mean / p99 ms', 'wait p50 / p99 ms', '× redis-semaphore (wait p99)', 'client / server cmds / section', 'settings'],
      results.map((r) => [
        r.label,
        `${fmt(r.p50Us, 0)} / ${fmt(r.p99Us, 0)}`,
        ratio(r.ratio.p50),
        `${fmt(r.clientPerCycle, 2)} / ${fmt(r.serverPerCycle, 1)}`,
        fmt(r.utilisation, 2),
        ratio(r.ratio.utilisation),
        `${fmt(r.gapMeanMs)} / ${fmt(r.gapP99Ms)}`,
        `${fmt(r.waitP50Ms)} / ${fmt(r.waitP99Ms)}`,
        ratio(r.ratio.waitP99),
        `${fmt(r.clientPerSection, 2)} / ${fmt(r.serverPerSection, 1)}`,
        r.settings,
      ]),
    ),
    '',
  ];
  if (memory.length) {
    out.push(
      `#### Redis memory per held lease (${s.memoryLeases} leases of each shape, same accounting as scenario 5)`,
      '',
      table(['Shape', 'B / lease', '× mutex'], memory.map((m) => [m.what, fmt(m.bytesPerLease, 0), fmt(m.ratio, 2)])),
      '',
    );
  }
  return out;
}

function readWriteSections(run: SuiteResult, report: BenchReport): string[] {
  if (!run.readWrite) return [];
  const s = report.sizes;
  return [
    `### 7. Read-heavy workload: read-write lock beside the mutex`,
    '',
    `${READ_WRITE_WORKERS} async workers over 4 clients on one name, ${s.readWriteSections} sections each, 1 in 10 a write, ${s.sectionMs} ms held per section; ` +
      `the same workload on the mutex (every section exclusive); ${s.latencyRounds} rounds, in turn. "Readers × mutex": readers' throughput over the mutex's in the same round, median over the rounds. ` +
      'Commands / section: every command Redis ran (INFO commandstats, commands inside scripts included).',
    '',
    table(
      ['Lock', 'round', 'reads/s', 'writes/s', 'read wait p50 / p99 ms', 'write wait p50 / p99 ms', 'most readers inside', 'scripts / section', 'commands / section', 'readers × mutex'],
      run.readWrite.flatMap((r) =>
        r.rounds.map((x, i) => [
          r.label,
          String(i + 1),
          fmt(x.readsPerSec, 0),
          fmt(x.writesPerSec, 0),
          `${fmt(x.readWait.p50, 1)} / ${fmt(x.readWait.p99, 1)}`,
          `${fmt(x.writeWait.p50, 1)} / ${fmt(x.writeWait.p99, 1)}`,
          String(x.mostReaders),
          fmt(x.scriptsPerSection, 2),
          fmt(x.commandsPerSection, 1),
          i === 0 ? fmt(r.readRatio, 2) : '',
        ]),
      ),
    ),
    '',
  ];
}

export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const out: string[] = [
    `# holdfast bench — ${report.date} (${report.mode}${report.repeat > 1 ? `, ${report.repeat} runs` : ''})`,
    '',
    `Node ${m.node}, Redis ${m.redis}, ${m.cpu} × ${m.cores} cores, ${m.memoryGb} GB, ${m.os}. ` +
      `Load average ${m.loadAvgStart.map((v) => v.toFixed(2)).join(' ')} at start, ${m.loadAvgEnd.map((v) => v.toFixed(2)).join(' ')} at the end. ` +
      `Took ${fmt(report.durationMs / 1000, 0)} s. Client, Redis servers and worker processes share this machine: compare ratios and medians within one run, not absolute times across machines.`,
    '',
    `holdfast measured: commit ${report.build.commit}` +
      (report.build.uncommitted.length ? ` with uncommitted changes (${report.build.uncommitted.map((l) => l.slice(3)).join(', ')})` : '') +
      `; builds ${Object.entries(report.build.dist).map(([p, h]) => `${p} ${h ?? 'not built'}`).join(', ')}` +
      (report.build.rebuiltDuringRun.length ? `; **rebuilt during the run: ${report.build.rebuiltDuringRun.join(', ')}**` : '') +
      '.',
    '',
  ];
  report.runs.forEach((run, i) => {
    out.push(report.runs.length > 1 ? `## Run ${i + 1} of ${report.runs.length}` : '## Results', '', ...runSections(run, report));
    if (run.notes.length) out.push('Notes:', '', ...run.notes.map((n) => `- ${n}`), '');
    const stray = Object.entries(run.strayErrors);
    if (stray.length) {
      out.push('Errors thrown by libraries from their own timers or callbacks, outside any call of the bench (counted, not fatal; in this process, forked workers count theirs in the notes and tables):', '', ...stray.map(([e, n]) => `- ${e} ×${n}`), '');
    }
  });
  out.push(
    '## Noise',
    '',
    'Machine before each scenario: 1-minute load average.',
    '',
    table(['Run', 'Scenario', 'load (1 min)'], report.runs.flatMap((run, i) => run.probes.map((p) => [String(i + 1), p.scenario, fmt(p.load1)]))),
    '',
    'Spread = (max − min) / min of the same figure measured repeatedly. Differences smaller than the spread are not results.',
    '',
    table(
      ['Figure', 'values', 'spread'],
      report.noise.map((n) => [n.figure, n.values.map((v) => fmt(v, 2)).join(', '), pct(n.spreadPct)]),
    ),
    '',
  );
  return out.join('\n');
}
