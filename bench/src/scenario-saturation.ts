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

export type SaturationReport = SaturationShape & { readonly results: SaturationResult[] };

/** Warm-up of a row after its first round. */
const LATER_WARMUP_MS = 300;

/** Every row, `saturationRounds` times in rotated order, on one client process per core. */
export async function runSaturation(rows: readonly SaturationRow[], sizes: Sizes, log: (line: string) => void): Promise<SaturationReport> {
  const cores = os.availableParallelism();
  const shape: SaturationShape = {
    processes: cores,
    connections: SATURATION_CONNECTIONS,
    loops: SATURATION_LOOPS,
    autoPipelining: true,
    warmupMs: sizes.saturationWarmupMs,
    laterWarmupMs: Math.min(LATER_WARMUP_MS, sizes.saturationWarmupMs),
    windowMs: sizes.saturationWindowMs,
    rounds: sizes.saturationRounds,
  };
  const children = Array.from({ length: cores }, () => forkScript(SATURATION_CHILD));
  const runs = new Map<string, RowRun[]>(rows.map((r) => [r.id, []]));
  const strayBefore: number[] = [];
  try {
    for (let round = 0; round < shape.rounds; round++) {
      // Rotated order, so a busy moment of the machine does not always hit the same row.
      for (let k = 0; k < rows.length; k++) {
        const row = rows[(k + round) % rows.length]!;
        const r = await measureRow(row, children, round ? { ...shape, warmupMs: shape.laterWarmupMs } : shape, strayBefore);
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
  return { ...shape, results: rows.map((row) => summarize(row, runs)) };
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
