import type { ContentionResult } from './scenario-contention.js';
import type { RedlockUncontended } from './scenario-redlock.js';
import type { RenewalResult } from './scenario-renewal.js';
import type { UncontendedResult } from './scenario-uncontended.js';
import type { ReadWriteResult } from './scenario-read-write.js';
import type { SemaphoreResult } from './scenario-semaphore.js';
import type { MemoryRow } from './semaphore-memory.js';
import type { SaturationReport } from './scenario-saturation.js';
import type { HoldersReport } from './scenario-holders.js';
import type { Sizes } from './options.js';
import type { BuildInfo } from './build-info.js';
import { median, spreadPct } from './stats.js';

/** What one pass over the scenarios produced, and the whole report written to results/. */

export interface SuiteResult {
  uncontended?: UncontendedResult[];
  contention?: ContentionResult[];
  multiprocess?: ContentionResult[];
  redlock?: { uncontended: RedlockUncontended[] };
  renewal?: RenewalResult[];
  /** holdfast's semaphore beside redis-semaphore's, and Redis memory per held permit lease or read hold. */
  semaphore?: { results: SemaphoreResult[]; memory: MemoryRow[] };
  /** Read-heavy workload: the read-write lock beside the mutex. */
  readWrite?: ReadWriteResult[];
  /** Uncontended cycles per second of Redis CPU, many client processes on one server. */
  saturation?: SaturationReport;
  /** Redis CPU per cycle on one name with 0 to 10,000 holders already on it. */
  holders?: HoldersReport;
  /** Why a row or a scenario is missing, and anything odd seen while running. */
  notes: string[];
  strayErrors: Record<string, number>;
  /** The 1-minute load average before each scenario. */
  probes: { readonly scenario: string; readonly load1: number }[];
  durationMs: number;
}

export interface Machine {
  readonly node: string;
  readonly redis: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGb: number;
  readonly os: string;
  readonly loadAvgStart: number[];
  readonly loadAvgEnd: number[];
}

export interface NoiseRow {
  readonly figure: string;
  readonly values: number[];
  readonly spreadPct: number;
}

export interface BenchReport {
  readonly date: string;
  readonly build: BuildInfo & { readonly rebuiltDuringRun: string[] };
  readonly mode: 'full' | 'quick';
  readonly repeat: number;
  readonly args: string[];
  readonly machine: Machine;
  readonly sizes: Sizes;
  readonly runs: SuiteResult[];
  readonly noise: NoiseRow[];
  readonly durationMs: number;
}

/** One figure across repeated runs: its median, and the runs' spread. */
export function acrossRuns(runs: readonly SuiteResult[], pick: (run: SuiteResult) => number | undefined): { value: number; values: number[]; spread: number } {
  const values = runs.map(pick).filter((v): v is number => v !== undefined && !Number.isNaN(v));
  return { value: values.length ? median(values) : Number.NaN, values, spread: spreadPct(values) };
}

export function findContention(run: SuiteResult, id: string, mode: string, multi = false): ContentionResult | undefined {
  return (multi ? run.multiprocess : run.contention)?.find((r) => r.id === id && r.mode === mode);
}
