import { describePer, type CommandCount } from './command-counter.js';
import type { ContentionFigures, WorkerTally } from './contention.js';
import type { LockLibrary } from './libraries.js';

/**
 * Scenario 3's result: `workers` workers, each with its own connection and its own library client, on one
 * key, in one or more worker processes (scenario-multiprocess.ts runs them).
 */

export const DRAIN_MS = 5000;

export type Mode = 'no-pause' | 'pause';

export interface ContentionResult extends ContentionFigures {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  readonly mode: Mode;
  readonly pauseMs: number;
  readonly processes: number;
  readonly workers: number;
  readonly target: number;
  readonly capped: boolean;
  /** False when the warm-up did not finish within the cap: the figures then include it. */
  readonly warmedUp: boolean;
  readonly drainTimedOut: boolean;
  /** Acquisitions seen while another worker of the same process was inside its section. */
  readonly overlapsFlag: number;
  /** Errors the library threw from its own timers inside forked workers. */
  readonly strayInWorkers?: number;
  readonly gaveUp: number;
  readonly errors: Record<string, number>;
  readonly releaseErrors: number;
  readonly drainCycles: number;
  readonly clientPerSection: number;
  readonly serverPerSection: number;
  /** CPU of the server's main thread per acquisition, µs (INFO cpu: scripts, commands, network I/O). */
  readonly serverUsPerSection: number;
  readonly clientDetail: string;
  readonly serverDetail: string;
}

export function buildResult(
  lib: LockLibrary,
  base: {
    mode: Mode;
    pauseMs: number;
    processes: number;
    workers: number;
    target: number;
    capped: boolean;
    warmedUp: boolean;
    drainTimedOut: boolean;
    overlapsFlag: number;
    strayInWorkers?: number;
  },
  figures: ContentionFigures,
  tally: WorkerTally,
  client: CommandCount,
  server: CommandCount,
): ContentionResult {
  const acquisitions = Math.max(1, tally.sections + tally.drainCycles);
  return {
    id: lib.id,
    label: lib.label,
    settings: lib.settings,
    ...base,
    ...figures,
    gaveUp: tally.gaveUp,
    errors: tally.errors,
    releaseErrors: tally.releaseErrors,
    drainCycles: tally.drainCycles,
    clientPerSection: client.total / acquisitions,
    serverPerSection: server.total / acquisitions,
    serverUsPerSection: (server.usec ?? Number.NaN) / acquisitions,
    clientDetail: describePer(client, acquisitions),
    serverDetail: describePer(server, acquisitions),
  };
}

/**
 * Sections kept out of the figures at the start of each run: one-off costs (SUBSCRIBE, a first attempt before
 * joining a queue, script loading) and the scramble of all workers arriving at once.
 */
export function warmupSections(workers: number): number {
  return workers * 4;
}

export function describeContention(r: ContentionResult): string {
  const gap = r.handoffOther;
  return (
    `${r.sections}/${r.target} sections${r.capped ? ' (capped)' : ''}, ${r.throughput.toFixed(0)}/s, util ${r.utilisation.toFixed(2)}, ` +
    `hand-off p50 ${gap.p50.toFixed(2)} ms, wait p99 ${r.wait.p99.toFixed(1)} ms, per worker ${r.minPerWorker}–${r.maxPerWorker}, ` +
    `starved ${r.starved}, overlaps ${r.overlapsFlag}/${r.overlapsByTime}, gave up ${r.gaveUp}, ` +
    `${r.clientPerSection.toFixed(2)} client cmds/section`
  );
}
