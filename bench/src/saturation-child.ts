import type { Locker } from './library-types.js';
import { setConnectOptions } from './processes.js';
import { saturationRow } from './saturation-rows.js';
import { installStrayErrorHandlers, strayTotal } from './stray-errors.js';

/**
 * One client process of the saturation scenario: `connections` lockers (each its own connection and library
 * client), `loops` acquire + release loops on each.
 */

export interface SaturationInit {
  readonly type: 'init';
  readonly rowId: string;
  readonly port: number;
  /** This process's index, part of every lock name it uses. */
  readonly process: number;
  readonly connections: number;
  readonly loops: number;
  readonly autoPipelining: boolean;
}

export type ToSaturationChild = SaturationInit | { readonly type: 'go' } | { readonly type: 'mark' } | { readonly type: 'stop' } | { readonly type: 'close' };

export type FromSaturationChild =
  | { readonly type: 'ready' }
  | {
      readonly type: 'done';
      /** Cycles completed between mark and stop. */
      readonly cycles: number;
      readonly errors: number;
      /** This process's CPU (user + system) between mark and stop, µs. */
      readonly cpuUs: number;
      readonly firstError?: string;
    }
  | { readonly type: 'closed'; readonly stray: number }
  | { readonly type: 'failed'; readonly message: string };

installStrayErrorHandlers();

const send = (message: FromSaturationChild) => process.send?.(message);

let lockers: Locker[] = [];
let init: SaturationInit | undefined;
let stopped = false;
let running: Promise<unknown> = Promise.resolve();
let cycles = 0;
let errors = 0;
let firstError: string | undefined;
let mark = { cycles: 0, errors: 0, cpu: process.cpuUsage() };

async function prepare(message: SaturationInit): Promise<void> {
  init = message;
  setConnectOptions({ enableAutoPipelining: message.autoPipelining });
  const row = saturationRow(message.rowId);
  lockers = await Promise.all(Array.from({ length: message.connections }, () => row.open(message.port)));
  send({ type: 'ready' });
}

async function loop(locker: Locker, name: string): Promise<void> {
  while (!stopped) {
    try {
      const release = await locker.acquire(name);
      await release();
      cycles++;
    } catch (error) {
      errors++;
      firstError ??= error instanceof Error ? error.message : String(error);
    }
  }
}

function go(): void {
  const config = init!;
  const row = saturationRow(config.rowId);
  stopped = false;
  cycles = errors = 0;
  firstError = undefined;
  running = Promise.all(
    lockers.flatMap((locker, c) =>
      Array.from({ length: config.loops }, (_, l) => loop(locker, row.sharedName ? 'sat-shared' : `sat:${config.process}:${c}:${l}`)),
    ),
  );
}

async function stop(): Promise<void> {
  const cpu = process.cpuUsage(mark.cpu);
  const counted = { cycles: cycles - mark.cycles, errors: errors - mark.errors };
  stopped = true;
  // Every lock is released before the row's processes close and its server goes.
  await running;
  send({ type: 'done', ...counted, cpuUs: cpu.user + cpu.system, ...(firstError ? { firstError } : {}) });
}

async function close(): Promise<void> {
  await Promise.all(lockers.map((l) => l.close().catch(() => undefined)));
  lockers = [];
  send({ type: 'closed', stray: strayTotal() });
}

process.on('message', (message: ToSaturationChild) => {
  const task =
    message.type === 'init'
      ? prepare(message)
      : message.type === 'go'
        ? Promise.resolve(go())
        : message.type === 'mark'
          ? Promise.resolve(void (mark = { cycles, errors, cpu: process.cpuUsage() }))
          : message.type === 'stop'
            ? stop()
            : close();
  task.catch((error: unknown) => {
    send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    setTimeout(() => process.exit(1), 100);
  });
});
process.on('disconnect', () => process.exit(0));
