import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { addCounts, diffCounts, fromPlain, snapshotServer, type CommandCount } from './command-counter.js';
import { analyse, mergeTallies, type SectionRecord, type WorkerTally } from './contention.js';
import type { ChildInit, FromChild, ToChild } from './contention-child.js';
import type { LockLibrary } from './libraries.js';
import type { Sizes } from './options.js';
import { forkScript, waitExit } from './processes.js';
import { buildResult, DRAIN_MS, warmupSections, type ContentionResult, type Mode } from './scenario-contention.js';
import { wallNow } from './stats.js';

/** Scenario 3: `processes` forked children with workers / processes workers each (one process: all of them in one). */

const CHILD = new URL('./contention-child.ts', import.meta.url);
const OVERLAP_TOLERANCE_MS = 0.2;

function sendTo(child: ChildProcess, message: ToChild): void {
  if (child.connected) child.send(message);
}

function nextMessage<T extends FromChild['type']>(child: ChildProcess, type: T, ms: number): Promise<Extract<FromChild, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`worker process: no ${type} within ${ms} ms`));
    }, ms);
    const onMessage = (message: FromChild) => {
      if (message.type === 'failed') {
        cleanup();
        reject(new Error(`worker process failed: ${message.message}`));
      } else if (message.type === type) {
        cleanup();
        resolve(message as Extract<FromChild, { type: T }>);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`worker process exited before ${type}`));
    };
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

type DoneReport = Extract<FromChild, { type: 'done' }>;

/** One continuous run across all children: warm-up sections, mark, measured sections or the cap, stop. */
async function measure(children: readonly ChildProcess[], admin: Redis, warmup: number, target: number, capMs: number) {
  const records: SectionRecord[] = [];
  let stoppedAt = 0;
  let capped = false;
  let onStop!: () => void;
  const stopped = new Promise<void>((resolve) => (onStop = resolve));
  const halt = (byCap: boolean) => {
    if (stoppedAt) return;
    stoppedAt = wallNow();
    capped = byCap;
    for (const child of children) sendTo(child, { type: 'stop' });
    onStop();
  };
  let mark = { start: wallNow(), server: snapshotServer([admin]), warmedUp: false };
  const onSection = (message: FromChild) => {
    if (message.type !== 'section' || stoppedAt) return;
    records.push(message.record);
    if (records.length === warmup) {
      for (const child of children) sendTo(child, { type: 'mark' });
      mark = { start: message.record.released, server: snapshotServer([admin]), warmedUp: true };
    }
    if (records.length >= warmup + target) halt(false);
  };
  for (const child of children) child.on('message', onSection);
  try {
    const done = children.map((child) => nextMessage(child, 'done', capMs + DRAIN_MS + 30_000));
    await mark.server;
    for (const child of children) sendTo(child, { type: 'go' });
    const cap = setTimeout(() => halt(true), capMs);
    await stopped;
    clearTimeout(cap);
    const reports: DoneReport[] = await Promise.all(done);
    const server = diffCounts(await mark.server, await snapshotServer([admin]));
    return {
      records: mark.warmedUp ? records.slice(warmup) : records,
      capped,
      warmedUp: mark.warmedUp,
      start: mark.start,
      stoppedAt,
      reports,
      server,
    };
  } finally {
    for (const child of children) child.off('message', onSection);
  }
}

export async function runMultiProcess(
  lib: LockLibrary,
  port: number,
  admin: Redis,
  sizes: Sizes,
  mode: Mode,
  processes: number,
): Promise<ContentionResult> {
  const pauseMs = mode === 'pause' ? sizes.pauseMs : 0;
  const perProcess = Math.max(1, Math.floor(sizes.workers / processes));
  const workers = perProcess * processes;
  const key = `bench-mp${processes}-${lib.id.replace(/:/g, '-')}-${mode}`;
  const children = Array.from({ length: processes }, () => forkScript(CHILD));
  try {
    await Promise.all(
      children.map((child, i) => {
        const ready = nextMessage(child, 'ready', 30_000);
        const init: ChildInit = {
          type: 'init',
          libId: lib.id,
          port,
          key,
          workers: perProcess,
          firstWorker: i * perProcess,
          sectionMs: sizes.sectionMs,
          pauseMs,
        };
        sendTo(child, init);
        return ready;
      }),
    );

    const p = await measure(children, admin, warmupSections(workers), sizes.sections, sizes.contentionCapMs);
    let client: CommandCount = { total: 0, byName: new Map() };
    const tallies: WorkerTally[] = [];
    let overlaps = 0;
    let drained = true;
    let stray = 0;
    for (const report of p.reports) {
      stray += report.stray;
      client = addCounts(client, fromPlain(report.client));
      tallies.push(...report.tallies);
      overlaps += report.overlaps;
      drained &&= report.drained;
    }
    const figures = analyse(p.records, workers, sizes.sectionMs, { start: p.start, end: p.stoppedAt }, OVERLAP_TOLERANCE_MS);
    return buildResult(
      lib,
      {
        mode,
        pauseMs,
        processes,
        workers,
        target: sizes.sections,
        capped: p.capped,
        warmedUp: p.warmedUp,
        drainTimedOut: !drained,
        overlapsFlag: overlaps,
        strayInWorkers: stray,
      },
      figures,
      mergeTallies(tallies),
      client,
      p.server,
    );
  } finally {
    for (const child of children) sendTo(child, { type: 'close' });
    await Promise.all(children.map((child) => waitExit(child, 5000)));
    await sleep(50);
  }
}
