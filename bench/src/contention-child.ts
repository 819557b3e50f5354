import { setTimeout as sleep } from 'node:timers/promises';
import { diffCounts, snapshotClient, toPlain } from './command-counter.js';
import { copyTally, newTally, tallySince, workerLoop, type SectionRecord, type WorkerTally } from './contention.js';
import { byId, type Locker } from './libraries.js';
import { DRAIN_MS } from './scenario-contention.js';
import { installStrayErrorHandlers, strayTotal } from './stray-errors.js';

/**
 * One forked process of the multi-process contention run: `workers` workers (own connection, own library
 * client each).
 */

export interface ChildInit {
  readonly type: 'init';
  readonly libId: string;
  readonly port: number;
  readonly key: string;
  readonly workers: number;
  readonly firstWorker: number;
  readonly sectionMs: number;
  readonly pauseMs: number;
}

export type ToChild =
  | ChildInit
  | { readonly type: 'go' }
  | { readonly type: 'mark' }
  | { readonly type: 'stop' }
  | { readonly type: 'close' };

export type FromChild =
  | { readonly type: 'ready' }
  | { readonly type: 'section'; readonly record: SectionRecord }
  | {
      readonly type: 'done';
      readonly tallies: WorkerTally[];
      readonly overlaps: number;
      readonly drained: boolean;
      readonly stray: number;
      readonly client: { total: number; byName: Record<string, number> };
    }
  | { readonly type: 'failed'; readonly message: string };

installStrayErrorHandlers();

const send = (message: FromChild) => process.send?.(message);
let lockers: Locker[] = [];
let init: ChildInit | undefined;
let stop = false;
let running: Promise<unknown> | undefined;
let client0 = snapshotClient();
const tallies: WorkerTally[] = [];
let marked: WorkerTally[] = [];
const flag = { held: 0, overlaps: 0 };

async function prepare(message: ChildInit): Promise<void> {
  init = message;
  const lib = byId(message.libId);
  lockers = await Promise.all(Array.from({ length: message.workers }, () => lib.open(message.port)));
  send({ type: 'ready' });
}

function mark(): void {
  client0 = snapshotClient();
  marked = tallies.map(copyTally);
}

function go(): void {
  const config = init!;
  mark();
  const ctl = {
    stopped: () => stop,
    flag,
    sectionMs: config.sectionMs,
    pauseMs: config.pauseMs,
    onSection: (record: SectionRecord) => send({ type: 'section', record }),
  };
  running = Promise.all(
    lockers.map((locker, i) => {
      const tally = newTally();
      tallies.push(tally);
      return workerLoop(config.firstWorker + i, locker, config.key, ctl, tally);
    }),
  );
}

async function finish(): Promise<void> {
  stop = true;
  const drained = await Promise.race([(running ?? Promise.resolve()).then(() => true), sleep(DRAIN_MS).then(() => false)]);
  const client = toPlain(diffCounts(client0, snapshotClient()));
  send({ type: 'done', tallies: tallies.map((t, i) => tallySince(t, marked[i] ?? newTally())), overlaps: flag.overlaps, drained, stray: strayTotal(), client });
}

async function close(): Promise<void> {
  await Promise.all(lockers.map((l) => l.close().catch(() => undefined)));
  // Libraries leave timers behind (node-redisson's wait timeouts); the parent has what it needs.
  setTimeout(() => process.exit(0), 100);
}

process.on('message', (message: ToChild) => {
  const task =
    message.type === 'init'
      ? prepare(message)
      : message.type === 'go'
        ? Promise.resolve(go())
        : message.type === 'mark'
          ? Promise.resolve(mark())
          : message.type === 'stop'
            ? finish()
            : close();
  task.catch((error: unknown) => {
    send({ type: 'failed', message: error instanceof Error ? error.stack ?? error.message : String(error) });
    process.exit(1);
  });
});
process.on('disconnect', () => process.exit(0));
