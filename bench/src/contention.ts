import { setTimeout as sleep } from 'node:timers/promises';
import type { Locker } from './libraries.js';
import { holdFor, summarize, wallNow, type Summary } from './stats.js';

/**
 * The worker loop of scenario 3 and the figures derived from its records, shared by the in-process run and
 * the forked workers.
 */

export interface SectionRecord {
  /** Global worker index. */
  readonly w: number;
  /** Wall ms when this worker started trying (before any retry after a give-up). */
  readonly requested: number;
  readonly acquired: number;
  /** Wall ms when the section ended and release() was called. */
  readonly released: number;
}

export interface WorkerTally {
  sections: number;
  /** Acquisitions after the stop: released at once, not counted as sections. */
  drainCycles: number;
  gaveUp: number;
  errors: Record<string, number>;
  releaseErrors: number;
}

export interface SharedFlag {
  held: number;
  overlaps: number;
}

export interface LoopControl {
  readonly stopped: () => boolean;
  readonly flag: SharedFlag;
  readonly sectionMs: number;
  readonly pauseMs: number;
  onSection(record: SectionRecord): void;
}

function errorName(error: unknown): string {
  if (error instanceof Error) return error.name === 'Error' ? error.message.slice(0, 60) : error.name;
  return String(error).slice(0, 60);
}

export function newTally(): WorkerTally {
  return { sections: 0, drainCycles: 0, gaveUp: 0, errors: {}, releaseErrors: 0 };
}

/** Runs sections until stopped; `tally` is filled in as it goes, so it can be read even if the loop hangs. */
export async function workerLoop(
  w: number,
  locker: Locker,
  key: string,
  ctl: LoopControl,
  tally: WorkerTally = newTally(),
): Promise<WorkerTally> {
  while (!ctl.stopped()) {
    const requested = wallNow();
    let release;
    for (;;) {
      try {
        release = await locker.acquire(key);
        break;
      } catch (error) {
        tally.gaveUp++;
        const name = errorName(error);
        tally.errors[name] = (tally.errors[name] ?? 0) + 1;
        if (ctl.stopped() || tally.gaveUp > 10_000) return tally;
      }
    }
    const acquired = wallNow();
    if (ctl.stopped()) {
      tally.drainCycles++;
      await release().catch(() => void tally.releaseErrors++);
      break;
    }
    if (ctl.flag.held > 0) ctl.flag.overlaps++;
    ctl.flag.held++;
    await holdFor(ctl.sectionMs);
    ctl.flag.held--;
    const released = wallNow();
    tally.sections++;
    ctl.onSection({ w, requested, acquired, released });
    try {
      await release();
    } catch {
      tally.releaseErrors++;
    }
    if (ctl.pauseMs > 0) await sleep(ctl.pauseMs);
  }
  return tally;
}

export interface ContentionFigures {
  readonly sections: number;
  readonly elapsedMs: number;
  readonly throughput: number;
  /** throughput × section length: the share of wall time the lock did useful work. */
  readonly utilisation: number;
  /** Release by X to acquisition by Y ≠ X, ms. */
  readonly handoffOther: Summary;
  /** Share of consecutive sections that went to another worker. */
  readonly otherShare: number;
  readonly wait: Summary;
  readonly perWorker: number[];
  readonly minPerWorker: number;
  readonly maxPerWorker: number;
  readonly starved: number;
  /** Sections that began before the previous one ended, from the timestamps. */
  readonly overlapsByTime: number;
}

export function analyse(
  records: readonly SectionRecord[],
  workers: number,
  sectionMs: number,
  window: { start: number; end: number },
  overlapToleranceMs: number,
): ContentionFigures {
  const sorted = [...records].sort((a, b) => a.acquired - b.acquired);
  const gaps: number[] = [];
  let lastEnd = -Infinity;
  let overlaps = 0;
  let others = 0;
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i]!;
    if (r.acquired < lastEnd - overlapToleranceMs) overlaps++;
    lastEnd = Math.max(lastEnd, r.released);
    const prev = sorted[i - 1];
    if (prev && prev.w !== r.w) {
      others++;
      gaps.push(r.acquired - prev.released);
    }
  }
  const perWorker = Array.from({ length: workers }, () => 0);
  for (const r of records) perWorker[r.w] = (perWorker[r.w] ?? 0) + 1;
  const elapsedMs = Math.max(1e-9, window.end - window.start);
  const throughput = (records.length / elapsedMs) * 1000;
  return {
    sections: records.length,
    elapsedMs,
    throughput,
    utilisation: (throughput * sectionMs) / 1000,
    handoffOther: summarize(gaps),
    otherShare: sorted.length > 1 ? others / (sorted.length - 1) : Number.NaN,
    wait: summarize(records.map((r) => r.acquired - r.requested)),
    perWorker,
    minPerWorker: Math.min(...perWorker),
    maxPerWorker: Math.max(...perWorker),
    starved: perWorker.filter((n) => n === 0).length,
    overlapsByTime: overlaps,
  };
}

/** What `after` added since `before` (a copy taken earlier of the same tally). */
export function tallySince(after: WorkerTally, before: WorkerTally): WorkerTally {
  const errors: Record<string, number> = {};
  for (const [name, n] of Object.entries(after.errors)) {
    const d = n - (before.errors[name] ?? 0);
    if (d > 0) errors[name] = d;
  }
  return {
    sections: after.sections - before.sections,
    drainCycles: after.drainCycles - before.drainCycles,
    gaveUp: after.gaveUp - before.gaveUp,
    errors,
    releaseErrors: after.releaseErrors - before.releaseErrors,
  };
}

export function copyTally(t: WorkerTally): WorkerTally {
  return { ...t, errors: { ...t.errors } };
}

export function mergeTallies(tallies: readonly WorkerTally[]): WorkerTally {
  const merged = newTally();
  for (const t of tallies) {
    merged.sections += t.sections;
    merged.drainCycles += t.drainCycles;
    merged.gaveUp += t.gaveUp;
    merged.releaseErrors += t.releaseErrors;
    for (const [name, n] of Object.entries(t.errors)) merged.errors[name] = (merged.errors[name] ?? 0) + n;
  }
  return merged;
}
