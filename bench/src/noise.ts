import { acrossRuns, findContention, type NoiseRow, type SuiteResult } from './suite.js';
import { spreadPct } from './stats.js';

/** The figures whose run-to-run spread the report shows. */
export function noiseRows(runs: readonly SuiteResult[]): NoiseRow[] {
  const rows: NoiseRow[] = [];
  const first = runs[0];
  if (!first) return rows;
  // Within a run: the rounds of every latency measurement.
  for (const u of first.uncontended ?? []) {
    rows.push({ figure: `run 1, uncontended p50 µs, rounds: ${u.label}`, values: u.rounds.map((r) => r.p50Us), spreadPct: u.spreadPct });
  }
  for (const group of first.redlock?.uncontended ?? []) {
    for (const u of group.results) {
      rows.push({
        figure: `run 1, ${group.instances} instances, p50 µs, rounds: ${u.label}`,
        values: u.rounds.map((r) => r.p50Us),
        spreadPct: u.spreadPct,
      });
    }
  }
  const rounds = (figure: string, values: number[]) => rows.push({ figure: `run 1, ${figure}`, values, spreadPct: spreadPct(values) });
  for (const r of first.semaphore?.results ?? []) rounds(`semaphore uncontended p50 µs, rounds: ${r.label}`, r.rounds.map((x) => x.p50Us));
  for (const r of first.readWrite ?? []) rounds(`read-heavy reads/s, rounds: ${r.label}`, r.rounds.map((x) => x.readsPerSec));
  for (const r of first.saturation?.results ?? []) rounds(`saturation cycles / Redis CPU s, rounds: ${r.label}`, r.rounds.map((x) => x.perRedisCpuS));
  for (const r of first.holders?.results ?? []) {
    for (const c of r.cells) rounds(`holders Redis CPU µs / cycle, rounds: ${r.label}, n = ${c.n}`, c.rounds.map((x) => x.cpuUs));
  }
  if (runs.length < 2) return rows;
  // Across runs: headline figures of every library.
  const add = (figure: string, pick: (r: SuiteResult) => number | undefined) => {
    const a = acrossRuns(runs, pick);
    if (a.values.length >= 2) rows.push({ figure: `across runs, ${figure}`, values: a.values, spreadPct: a.spread });
  };
  for (const u of (first.uncontended ?? []).filter((x) => x.id !== 'floor')) add(`uncontended × floor: ${u.label}`, (r) => r.uncontended?.find((x) => x.id === u.id)?.ratio);
  for (const c of first.contention ?? []) {
    add(`${c.mode} throughput/s: ${c.label}`, (r) => findContention(r, c.id, c.mode)?.throughput);
    add(`${c.mode} hand-off p50 ms: ${c.label}`, (r) => findContention(r, c.id, c.mode)?.handoffOther.p50);
    add(`${c.mode} wait p99 ms: ${c.label}`, (r) => findContention(r, c.id, c.mode)?.wait.p99);
  }
  for (const x of first.renewal ?? []) add(`renewal CPU %: ${x.label}`, (r) => r.renewal?.find((y) => y.id === x.id)?.cpuPct);
  const semaphore = (r: SuiteResult) => r.semaphore?.results.find((x) => x.id === 'holdfast');
  add('semaphore wait p99 × redis-semaphore: holdfast', (r) => semaphore(r)?.ratio.waitP99);
  add('semaphore utilisation × redis-semaphore: holdfast', (r) => semaphore(r)?.ratio.utilisation);
  add('read-heavy readers × mutex: holdfast read-write lock', (r) => r.readWrite?.find((x) => x.mode === 'read-write')?.readRatio);
  for (const x of (first.saturation?.results ?? []).filter((y) => y.id !== 'floor')) {
    add(`saturation × floor: ${x.label}`, (r) => r.saturation?.results.find((y) => y.id === x.id)?.ratioFloor);
  }
  return rows;
}
