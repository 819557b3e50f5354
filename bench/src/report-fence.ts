import type { FenceBenchResult } from './scenario-fence.js';
import { fmt, markdownTable } from './stats.js';
import type { BenchReport } from './suite.js';

/** The markdown section of scenario 8 (scenario-fence.ts). */
export function fenceSection(results: readonly FenceBenchResult[] | undefined, report: BenchReport): string[] {
  if (!results?.length) return [];
  const s = report.sizes;
  const rows = results.map((r) => [
    `${r.database} ${r.server}`,
    `${fmt(r.unfenced.p50Us, 0)} / ${fmt(r.unfenced.p99Us, 0)}`,
    `${fmt(r.fenced.p50Us, 0)} / ${fmt(r.fenced.p99Us, 0)}`,
    `${fmt(r.ratio)}×`,
    `${r.statements.fenced} / ${r.statements.unfenced}`,
  ]);
  const head = ['Database', 'unfenced p50 / p99 µs', 'fenced p50 / p99 µs', 'fenced × unfenced (p50)', 'statements fenced / unfenced'];
  return [
    '### 8. Fencing at the resource: a one-row transaction, fenced and unfenced',
    '',
    `\`BEGIN\`, \`UPDATE … SET n = n + 1\`, \`COMMIT\` on one pooled connection, and the same through \`fencedTransaction\` ` +
      `(a fresh, greater token each time: the fence row is raised every transaction). ${s.cycles} transactions of each per round ` +
      `after ${s.warmupCycles} warm-up, in alternating turns, ${s.latencyRounds} rounds; "×": fenced p50 over unfenced p50 of the same round, median over the rounds.`,
    '',
    ...markdownTable(head, rows),
    '',
  ];
}
