import type { HoldersReport, HoldersResult, Ratios } from './scenario-holders.js';
import { fmt, median, markdownTable } from './stats.js';

/** The markdown section of the holders scenario (scenario-holders.ts). */

const table = markdownTable;

const ratio = (v: number) => (Number.isNaN(v) ? '–' : `${fmt(v, 2)}×`);

function figureTable(results: readonly HoldersResult[], pick: (c: HoldersResult['cells'][number]) => number, over: (r: Ratios) => number): string[] {
  const counts = results[0]?.cells.map((c) => c.n) ?? [];
  return table(
    ['Row', ...counts.map((n) => `n = ${n.toLocaleString('en-US')}: µs (× n = 0)`), 'server calls / cycle'],
    results.map((r) => [
      r.label,
      ...r.cells.map((c) => (c.n === 0 ? fmt(pick(c), 1) : `${fmt(pick(c), 1)} (${ratio(over(c.overN0))})`)),
      r.cells.map((c) => fmt(c.serverCalls, 1)).join(' / '),
    ]),
  );
}

export function holdersSection(report: HoldersReport | undefined): string[] {
  if (!report?.results.length) return [];
  const counts = report.results[0]!.cells.map((c) => c.n);
  const versus = report.results.filter((r) => r.id === 'holdfast:read' || r.id === 'holdfast:semaphore');
  const out = [
    '### 11. Holders: Redis CPU per cycle on one name with n holders already on it',
    '',
    `Each round a fresh redis-server; every row gets a name of its own per n, filled with its n holders through the library (leases of 10 min, nobody renewing), ` +
      `then ${report.warmup} warm-up cycles and ${report.cycles} measured cycles per name, one cycle at a time, the names taking turns in blocks of ${report.block} cycles. ` +
      `${report.rounds} round${report.rounds > 1 ? 's' : ''}; figures: median over the rounds; ratios within a round, then the median. ` +
      'Redis CPU: INFO cpu used_cpu_user + used_cpu_sys of the server over the blocks (scripts, commands and request I/O). ' +
      'Command time: INFO commandstats usec of the commands the measured client sent (a script\'s includes every command it runs; no request I/O; wall time inside the server).',
    '',
    ...report.results.map((r) => `- ${r.label}: ${r.cycle}.`),
    '',
    '#### Redis CPU, µs per cycle',
    '',
    ...figureTable(report.results, (c) => c.cpuUs, (r) => r.cpu),
    '',
    '#### Command time, µs per cycle',
    '',
    ...figureTable(report.results, (c) => c.commandUs, (r) => r.command),
    '',
    '#### Against redis-semaphore and the mutex at the same n (Redis CPU / command time)',
    '',
    ...table(
      ['Row', ...counts.flatMap((n) => [`n = ${n.toLocaleString('en-US')}: × redis-semaphore`, '× holdfast mutex'])],
      versus.map((r) => [r.label, ...r.cells.flatMap((c) => [`${ratio(c.overRedisSemaphore.cpu)} / ${ratio(c.overRedisSemaphore.command)}`, `${ratio(c.overMutex.cpu)} / ${ratio(c.overMutex.command)}`])]),
    ),
    '',
  ];
  if (report.purge.length) {
    const counts = [...new Set(report.purge.map((p) => p.n))];
    out.push(
      '#### Purge: a write try on n readers whose leases ended (none purged yet) and one live reader',
      '',
      'The readers come from a client closed without releasing (a crashed process); the try purges the n and is refused by the live one. Command time of that one call, median over the rounds (each round\'s in brackets).',
      '',
      ...table(
        ['n', 'command time µs', 'µs per purged reader', 'commands it ran'],
        counts.map((n) => {
          const rounds = report.purge.filter((p) => p.n === n);
          const us = median(rounds.map((p) => p.commandUs));
          return [n.toLocaleString('en-US'), `${fmt(us, 0)} (${rounds.map((p) => fmt(p.commandUs, 0)).join(', ')})`, fmt(us / n, 2), String(rounds[0]!.serverCalls)];
        }),
      ),
      '',
    );
  }
  return out;
}
