import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import type { Sizes } from './options.js';
import { forkScript, waitExit } from './processes.js';
import { measureRow, SATURATION_CHILD, type RowRun, type SaturationRound, type SaturationShape } from './saturation-measure.js';
import type { SaturationRow } from './saturation-rows.js';
import { median, spreadPct } from './stats.js';

/** Server saturation: what one second of Redis CPU buys. */

/**
 * One connection per client process, as a server process usually has, with ioredis's auto-pipelining on (the
 * commands its loops issue in one tick go out as one write, so Redis reads them in one read and answers them
 * in one write, as a busy server does) and enough loops to fill those pipelines.
 */
export const SATURATION_CONNECTIONS = 1;
export const SATURATION_LOOPS = 32;

export interface SaturationResult {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  readonly baselineId: string;
  readonly rounds: SaturationRound[];
  /** Cycles per second of Redis CPU, median over the rounds. */
  readonly perRedisCpuS: number;
  /** Redis CPU per cycle, µs (from the median above). */
  readonly redisUsPerCycle: number;
  /** Redis CPU s per wall s, median over the rounds. */
  readonly redisUtil: number;
  /** Cycles per wall second, median over the rounds. */
  readonly perWallS: number;
  /** Client processes' CPU s per wall s, median over the rounds. */
  readonly clientUtil: number;
  readonly serverCallsPerCycle: number;
  /** perRedisCpuS over the floor's in the same round, median over the rounds. */
  readonly ratioFloor: number;
  /** perRedisCpuS over the baseline row's in the same round (redis-semaphore's Mutex or Semaphore), median over the rounds. */
  readonly ratioBaseline: number;
  /** (max − min) / min of the rounds' perRedisCpuS, %. */
  readonly spreadPct: number;
  readonly errors: number;
  readonly firstError?: string;
  /** Errors the library threw from its own timers in the client processes. */
  readonly stray: number;
}

/** One step of the calibration: Redis's utilisation with this many client processes. */
export interface CalibrationStep {
  readonly processes: number;
  readonly redisUtil: number;
  readonly clientUtil: number;
}

export interface SaturationReport extends SaturationShape {
  /** Row the process count was chosen on, and each step; empty when the count was fixed. */
  readonly calibration: { readonly rowId: string; readonly steps: CalibrationStep[] };
  readonly results: SaturationResult[];
}

/** A step must raise Redis's CPU per wall second by this much for the calibration to try one more process. */
const CALIBRATION_GAIN = 1.05;
const CALIBRATION_WARMUP_MS = 500;
const CALIBRATION_WINDOW_MS = 1000;
/** Warm-up of a row after its first round. */
const LATER_WARMUP_MS = 300;

/**
 * Adds client processes one at a time, on one row with short windows, while Redis's CPU per wall second still
 * rises by CALIBRATION_GAIN; the count is the last that did.
 */
async function calibrate(row: SaturationRow, children: readonly ChildProcess[], shape: SaturationShape, strayBefore: number[], log: (line: string) => void) {
  const steps: CalibrationStep[] = [];
  const short = { ...shape, warmupMs: CALIBRATION_WARMUP_MS, windowMs: CALIBRATION_WINDOW_MS };
  let chosen = 1;
  let best = 0;
  for (let n = 1; n <= children.length; n++) {
    const r = await measureRow(row, children.slice(0, n), short, strayBefore);
    const step = { processes: n, redisUtil: r.redisCpuS / r.wallS, clientUtil: r.clientCpuS / r.wallS };
    steps.push(step);
    log(`  calibration, ${n} client process${n > 1 ? 'es' : ''} (${row.label}): Redis ${step.redisUtil.toFixed(2)} CPU s / s, clients ${step.clientUtil.toFixed(2)}`);
    if (n > 1 && step.redisUtil < best * CALIBRATION_GAIN) break;
    chosen = n;
    best = Math.max(best, step.redisUtil);
  }
  return { chosen, steps };
}

/**
 * Every row, `saturationRounds` times in rotated order, on one client process per core, or, with
 * `saturationCalibrate`, on the count `calibrate` picks between 1 and two per core (at most 16).
 */
export async function runSaturation(rows: readonly SaturationRow[], sizes: Sizes, log: (line: string) => void): Promise<SaturationReport> {
  const cores = os.availableParallelism();
  let shape: SaturationShape = {
    processes: cores,
    connections: SATURATION_CONNECTIONS,
    loops: SATURATION_LOOPS,
    autoPipelining: true,
    warmupMs: sizes.saturationWarmupMs,
    laterWarmupMs: Math.min(LATER_WARMUP_MS, sizes.saturationWarmupMs),
    windowMs: sizes.saturationWindowMs,
    rounds: sizes.saturationRounds,
  };
  // Up to two per core, at most 16: more processes than cores only share them.
  const children = Array.from({ length: sizes.saturationCalibrate ? Math.min(16, 2 * cores) : cores }, () => forkScript(SATURATION_CHILD));
  const runs = new Map<string, RowRun[]>(rows.map((r) => [r.id, []]));
  const strayBefore: number[] = [];
  const calibrationRow = rows.find((r) => r.id === 'holdfast') ?? rows[0]!;
  let calibration: SaturationReport['calibration'] = { rowId: calibrationRow.id, steps: [] };
  try {
    if (sizes.saturationCalibrate) {
      const c = await calibrate(calibrationRow, children, shape, strayBefore, log);
      shape = { ...shape, processes: c.chosen };
      calibration = { rowId: calibrationRow.id, steps: c.steps };
      log(`  ${c.chosen} client process${c.chosen > 1 ? 'es' : ''} per row`);
    }
    const active = children.slice(0, shape.processes);
    for (let round = 0; round < shape.rounds; round++) {
      // Rotated order, so a busy moment of the machine does not always hit the same row.
      for (let k = 0; k < rows.length; k++) {
        const row = rows[(k + round) % rows.length]!;
        const r = await measureRow(row, active, round ? { ...shape, warmupMs: shape.laterWarmupMs } : shape, strayBefore);
        runs.get(row.id)!.push(r);
        log(
          `  round ${round + 1} ${row.label}: ${Math.round(r.perRedisCpuS)} cycles per Redis CPU s, ` +
            `Redis ${(r.redisCpuS / r.wallS).toFixed(2)} CPU s / s, clients ${(r.clientCpuS / r.wallS).toFixed(2)}, ${Math.round(r.cycles / r.wallS)} cycles/s` +
            (r.errors ? `, ${r.errors} errors (${r.firstError})` : ''),
        );
      }
    }
  } finally {
    // A client process exits when its channel closes (every row has closed its connections by then).
    for (const child of children) if (child.connected) child.disconnect();
    await Promise.all(children.map((child) => waitExit(child, 5000)));
  }
  return { ...shape, calibration, results: rows.map((row) => summarize(row, runs)) };
}

function summarize(row: SaturationRow, runs: ReadonlyMap<string, RowRun[]>): SaturationResult {
  const mine = runs.get(row.id)!;
  const over = (id: string) => {
    const other = runs.get(id);
    return other ? median(mine.map((r, i) => r.perRedisCpuS / (other[i]?.perRedisCpuS ?? Number.NaN))) : Number.NaN;
  };
  const perRedisCpuS = median(mine.map((r) => r.perRedisCpuS));
  const cycles = mine.reduce((n, r) => n + r.cycles, 0);
  const firstError = mine.find((r) => r.firstError)?.firstError;
  return {
    id: row.id,
    label: row.label,
    settings: row.settings,
    baselineId: row.baselineId,
    rounds: mine.map(({ firstError: _, stray: __, ...round }) => round),
    perRedisCpuS,
    redisUsPerCycle: 1e6 / perRedisCpuS,
    redisUtil: median(mine.map((r) => r.redisCpuS / r.wallS)),
    perWallS: median(mine.map((r) => r.cycles / r.wallS)),
    clientUtil: median(mine.map((r) => r.clientCpuS / r.wallS)),
    serverCallsPerCycle: mine.reduce((n, r) => n + r.serverCalls, 0) / cycles,
    ratioFloor: over('floor'),
    ratioBaseline: over(row.baselineId),
    spreadPct: spreadPct(mine.map((r) => r.perRedisCpuS)),
    errors: mine.reduce((n, r) => n + r.errors, 0),
    stray: mine.reduce((n, r) => n + r.stray, 0),
    ...(firstError ? { firstError } : {}),
  };
}

/** What the run's notes say about a row: failed cycles, errors from the library's own timers. */
export function saturationNotes(report: SaturationReport): string[] {
  return report.results.flatMap((r) => [
    ...(r.errors ? [`${r.label}, saturation: ${r.errors} failed cycles (first: ${r.firstError ?? '?'}).`] : []),
    ...(r.stray ? [`${r.label}, saturation: ${r.stray} errors thrown from the library's own timers in the client processes.`] : []),
  ]);
}
