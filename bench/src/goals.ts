import { acrossRuns, findContention, type GoalCheck, type NoiseRow, type SuiteResult } from './suite.js';
import { fmt, median, spreadPct } from './stats.js';
import { HANDOFF_FLOOR_ID } from './handoff-floor.js';

/**
 * holdfast's goals from the issue, checked against the median over the
 * repeated runs (one run unless --repeat). A goal whose scenario did not
 * run is listed as not measured, never as met.
 */

function check(goal: string, target: string, value: number, unit: string, ok: (v: number) => boolean, digits = 2): GoalCheck {
  if (Number.isNaN(value)) return { goal, target, measured: 'not measured', met: undefined };
  return { goal, target, measured: `${fmt(value, digits)}${unit}`, met: ok(value) };
}

export function evaluateGoals(runs: readonly SuiteResult[]): GoalCheck[] {
  const goals: GoalCheck[] = [];
  const uncontended = (run: SuiteResult) => run.uncontended?.find((r) => r.id === 'holdfast');
  goals.push(
    check('Uncontended acquire+release, p50', '≤ 1.10 × floor', acrossRuns(runs, (r) => uncontended(r)?.ratio).value, ' × floor', (v) => v <= 1.1),
    check('Uncontended client commands per cycle', 'exactly 2', acrossRuns(runs, (r) => uncontended(r)?.clientPerCycle).value, '', (v) => Math.abs(v - 2) < 1e-9),
    check(
      'Uncontended client CPU per cycle',
      '≤ redis-semaphore Mutex',
      acrossRuns(runs, (r) => {
        // Per round, like every ratio of the bench: both in the same round, then the median.
        const semaphore = r.uncontended?.find((u) => u.id === 'redis-semaphore');
        const mine = uncontended(r);
        return semaphore && mine ? median(mine.rounds.map((round, i) => round.cpuUs / semaphore.rounds[i]!.cpuUs)) : undefined;
      }).value,
      ' × redis-semaphore',
      (v) => v <= 1,
    ),
    check(
      'Unrelated promise-heavy code, holdfast withLock used in the process (CPU)',
      '≤ 1.05 × without holdfast',
      acrossRuns(runs, (r) => r.asyncContext?.find((a) => a.state === 'withLock')?.cpuRatio).value,
      ' × without',
      (v) => v <= 1.05,
    ),
  );
  for (const multi of [false, true]) {
    const where = multi ? ' (4 processes)' : ' (1 process)';
    const forced = (r: SuiteResult) => findContention(r, 'holdfast', 'pause', multi);
    const free = (r: SuiteResult) => findContention(r, 'holdfast', 'no-pause', multi);
    const floor = (r: SuiteResult) => findContention(r, HANDOFF_FLOOR_ID, 'pause', multi);
    const floorUtil = acrossRuns(runs, (r) => floor(r)?.utilisation).value;
    const floorP50 = acrossRuns(runs, (r) => floor(r)?.handoffOther.p50).value;
    goals.push(
      {
        // Not a goal: what the machine allows any pub/sub hand-off, measured in the same run.
        goal: `Reference, bare FIFO pub/sub hand-off floor: utilisation / hand-off p50${where}`,
        target: '–',
        measured: Number.isNaN(floorUtil) ? 'not measured' : `${fmt(floorUtil, 3)} / ${fmt(floorP50, 3)} ms`,
        met: undefined,
      },
      check(`Forced hand-offs: utilisation${where}`, '≥ 0.90', acrossRuns(runs, (r) => forced(r)?.utilisation).value, '', (v) => v >= 0.9, 3),
      check(`Forced hand-offs: hand-off to another worker, p50${where}`, '≤ 0.5 ms', acrossRuns(runs, (r) => forced(r)?.handoffOther.p50).value, ' ms', (v) => v <= 0.5, 3),
      check(`Forced hand-offs: wait p99${where}`, '≤ 30 ms', acrossRuns(runs, (r) => forced(r)?.wait.p99).value, ' ms', (v) => v <= 30, 1),
      check(`No pause: starved workers${where}`, '0', acrossRuns(runs, (r) => free(r)?.starved).value, '', (v) => v === 0, 0),
      check(
        `Contended client commands per section${where}`,
        '≤ 3',
        acrossRuns(runs, (r) => Math.max(forced(r)?.clientPerSection ?? Number.NaN, free(r)?.clientPerSection ?? Number.NaN)).value,
        ' (worse of the two modes)',
        (v) => v <= 3,
      ),
    );
  }
  const renewal = (run: SuiteResult) => run.renewal?.find((r) => r.id === 'holdfast');
  goals.push(
    check('Renewal: client commands/s for the held leases', '≤ 8 /s', acrossRuns(runs, (r) => renewal(r)?.clientPerSec).value, ' /s', (v) => v <= 8),
    check('Renewal: client CPU', '≤ 1 %', acrossRuns(runs, (r) => renewal(r)?.cpuPct).value, ' %', (v) => v <= 1),
    check('Renewal: client RSS growth', '≤ 10 MB', acrossRuns(runs, (r) => renewal(r)?.rssDeltaMb).value, ' MB', (v) => v <= 10, 1),
    check('Redis memory per held lock', '≤ 200 B', acrossRuns(runs, (r) => renewal(r)?.bytesPerLock).value, ' B', (v) => v <= 200, 0),
  );
  const overlaps = acrossRuns(runs, (r) => {
    const all = [...(r.contention ?? []), ...(r.multiprocess ?? [])].filter((c) => c.id === 'holdfast');
    return all.length ? all.reduce((n, c) => n + c.overlapsFlag + c.overlapsByTime, 0) : undefined;
  });
  goals.push(check('Overlapping critical sections (all contention runs)', '0', overlaps.value, '', (v) => v === 0, 0));
  goals.push(...holdersGoals(runs));
  return goals;
}

/**
 * Issue 52's goals: the cost of a cycle does not grow with the holders on the
 * name. Checked on Redis CPU (the holders scenario's first figure); the
 * command time's ratio is shown beside it.
 */
function holdersGoals(runs: readonly SuiteResult[]): GoalCheck[] {
  const cell = (r: SuiteResult, id: string, n: number) => r.holders?.results.find((x) => x.id === id)?.cells.find((c) => c.n === n);
  const holders = (goal: string, target: string, limit: number, unit: string, pick: (r: SuiteResult) => { cpu: number; command: number } | undefined): GoalCheck => {
    const cpu = acrossRuns(runs, (r) => pick(r)?.cpu).value;
    const command = acrossRuns(runs, (r) => pick(r)?.command).value;
    const checked = check(goal, target, cpu, unit, (v) => v <= limit);
    return Number.isNaN(cpu) ? checked : { ...checked, measured: `${checked.measured} (command time ${fmt(command, 2)}${unit})` };
  };
  const saturation = (r: SuiteResult) => {
    const rows = r.saturation?.results;
    const shared = rows?.find((x) => x.id === 'holdfast:rw-read-shared');
    const own = rows?.find((x) => x.id === 'holdfast:rw-read');
    // Per round, as every ratio of the scenario.
    return shared && own ? median(shared.rounds.map((round, i) => round.perRedisCpuS / (own.rounds[i]?.perRedisCpuS ?? Number.NaN))) : undefined;
  };
  return [
    ...['read', 'semaphore'].flatMap((kind) =>
      [1000, 10_000].map((n) =>
        holders(`Holders: ${kind} cycle with ${n.toLocaleString('en-US')} holders on the name`, '≤ 1.5 × with none', 1.5, ' × n = 0', (r) => cell(r, `holdfast:${kind}`, n)?.overN0),
      ),
    ),
    holders('Holders: semaphore cycle with 1,000 holders', '≤ 1.5 × redis-semaphore', 1.5, ' × redis-semaphore', (r) => cell(r, 'holdfast:semaphore', 1000)?.overRedisSemaphore),
    holders('Holders: uncontended semaphore cycle', '≤ 2 × redis-semaphore', 2, ' × redis-semaphore', (r) => cell(r, 'holdfast:semaphore', 0)?.overRedisSemaphore),
    holders('Holders: uncontended read cycle', '≤ 1.5 × holdfast mutex', 1.5, ' × mutex', (r) => cell(r, 'holdfast:read', 0)?.overMutex),
    check('Saturation: readers all on one name, cycles per Redis CPU s', '≥ 0.5 × readers on names of their own', acrossRuns(runs, saturation).value, ' × own names', (v) => v >= 0.5),
  ];
}

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
