import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { describePer, diffCounts, snapshotClient, snapshotServer, type CommandCount } from './command-counter.js';
import {
  analyse,
  mergeTallies,
  copyTally,
  newTally,
  tallySince,
  workerLoop,
  type ContentionFigures,
  type SectionRecord,
  type WorkerTally,
} from './contention.js';
import type { Locker, LockLibrary } from './libraries.js';
import type { Sizes } from './options.js';
import { wallNow } from './stats.js';

/**
 * Scenario 3, in one process: `workers` workers, each with its own ioredis connection and its own library
 * client, on one key.
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

interface Measured {
  records: SectionRecord[];
  tallies: WorkerTally[];
  overlaps: number;
  capped: boolean;
  warmedUp: boolean;
  drained: boolean;
  start: number;
  stoppedAt: number;
  client: CommandCount;
  server: CommandCount;
}

/**
 * Sections kept out of the figures at the start of each run: one-off costs (SUBSCRIBE, a first attempt before
 * joining a queue, script loading) and the scramble of all workers arriving at once.
 */
export function warmupSections(workers: number): number {
  return workers * 4;
}

async function measure(
  lockers: readonly Locker[],
  key: string,
  admin: Redis,
  sizes: Sizes,
  pauseMs: number,
): Promise<Measured> {
  const warmup = warmupSections(lockers.length);
  const records: SectionRecord[] = [];
  const flag = { held: 0, overlaps: 0 };
  const tallies = lockers.map(() => newTally());
  let stop = false;
  let capped = false;
  let stoppedAt = 0;
  let onStop!: () => void;
  const stopped = new Promise<void>((resolve) => (onStop = resolve));
  const halt = (byCap: boolean) => {
    if (stop) return;
    stop = true;
    capped = byCap;
    stoppedAt = wallNow();
    onStop();
  };
  let mark = { start: wallNow(), client: snapshotClient(), server: snapshotServer([admin]), tallies: tallies.map(copyTally), warmedUp: false };
  await mark.server;
  const cap = setTimeout(() => halt(true), sizes.contentionCapMs);
  const ctl = {
    stopped: () => stop,
    flag,
    sectionMs: sizes.sectionMs,
    pauseMs,
    onSection(record: SectionRecord) {
      records.push(record);
      if (records.length === warmup) {
        mark = { start: record.released, client: snapshotClient(), server: snapshotServer([admin]), tallies: tallies.map(copyTally), warmedUp: true };
      }
      if (records.length >= warmup + sizes.sections) halt(false);
    },
  };
  const all = Promise.all(lockers.map((locker, w) => workerLoop(w, locker, key, ctl, tallies[w])));
  const drained = await Promise.race([all.then(() => true), stopped.then(() => sleep(DRAIN_MS)).then(() => false)]);
  clearTimeout(cap);
  const client = diffCounts(mark.client, snapshotClient());
  const server = diffCounts(await mark.server, await snapshotServer([admin]));
  return {
    records: mark.warmedUp ? records.slice(warmup) : records,
    tallies: tallies.map((t, i) => tallySince(t, mark.tallies[i]!)),
    overlaps: flag.overlaps,
    capped,
    warmedUp: mark.warmedUp,
    drained,
    start: mark.start,
    stoppedAt,
    client,
    server,
  };
}

export async function runInProcess(lib: LockLibrary, port: number, admin: Redis, sizes: Sizes, mode: Mode): Promise<ContentionResult> {
  const pauseMs = mode === 'pause' ? sizes.pauseMs : 0;
  const key = `bench-c-${lib.id.replace(/:/g, '-')}-${mode}`;
  const lockers = await Promise.all(Array.from({ length: sizes.workers }, () => lib.open(port)));
  try {
    const m = await measure(lockers, key, admin, sizes, pauseMs);
    const figures = analyse(m.records, sizes.workers, sizes.sectionMs, { start: m.start, end: m.stoppedAt }, 0);
    return buildResult(
      lib,
      {
        mode,
        pauseMs,
        processes: 1,
        workers: sizes.workers,
        target: sizes.sections,
        capped: m.capped,
        warmedUp: m.warmedUp,
        drainTimedOut: !m.drained,
        overlapsFlag: m.overlaps,
      },
      figures,
      mergeTallies(m.tallies),
      m.client,
      m.server,
    );
  } finally {
    await Promise.all(lockers.map((l) => l.close().catch(() => undefined)));
  }
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
