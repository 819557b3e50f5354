import type { SaturationReport } from './scenario-saturation.js';
import { fmt, pct, markdownTable } from './stats.js';

/** The markdown section of the saturation scenario (scenario-saturation.ts). */
export function saturationSection(report: SaturationReport | undefined): string[] {
  if (!report?.results.length) return [];
  const ratio = (v: number) => (Number.isNaN(v) ? '–' : fmt(v, 2));
  const head = [
    'Row',
    'cycles / Redis CPU s',
    'Redis CPU µs / cycle',
    '× floor',
    '× redis-semaphore',
    'spread between rounds',
    'Redis CPU s / wall s',
    'clients CPU s / wall s',
    'cycles / wall s',
    'server calls / cycle',
    'errors',
  ];
  const rows = report.results.map((r) => [
    r.label,
    fmt(r.perRedisCpuS, 0),
    fmt(r.redisUsPerCycle, 1),
    ratio(r.ratioFloor),
    r.id === r.baselineId ? '1.00' : ratio(r.ratioBaseline),
    pct(r.spreadPct),
    fmt(r.redisUtil, 2),
    fmt(r.clientUtil, 2),
    fmt(r.perWallS, 0),
    fmt(r.serverCallsPerCycle, 1),
    String(r.errors),
  ]);
  return [
    '### 10. Server saturation: uncontended cycles per second of Redis CPU',
    '',
    `${report.processes} client process${report.processes > 1 ? 'es' : ''}, each with ${report.connections} connection and library client and ${report.loops} acquire + release loops on it ` +
      (report.autoPipelining
        ? "(ioredis's auto-pipelining on: the commands the loops issue in one tick go out in one write; pipelining in the driver, no library call batches), "
        : '(auto-pipelining off), ') +
      'every loop on a name of its own ' +
      `(the shared-name readers row: all on one name). A fresh redis-server per row and round; ${report.warmupMs / 1000} s of warm-up${report.rounds > 1 ? ` (${report.laterWarmupMs / 1000} s after the first round)` : ''}, then ${report.windowMs / 1000} s measured, ` +
      `${report.rounds > 1 ? `${report.rounds} rounds, rows in rotated order` : 'one round'}; one client process per core. ` +
      'Redis CPU: INFO cpu used_cpu_user + used_cpu_sys over the window. The client processes and the server share this machine\'s cores, so the server may not get a whole core: ' +
      'the figure is per second of Redis CPU, not of wall time, and the Redis CPU s / wall s column says how busy it was. ' +
      '"× floor": over the floor\'s figure of the same round; "× redis-semaphore": over its Mutex\'s (its Semaphore\'s for the semaphore rows), median over the rounds.',
    '',
    ...markdownTable(head, rows),
    '',
  ];
}
