import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { RedisServer } from './processes.js';
import type { FromSaturationChild, SaturationInit, ToSaturationChild } from './saturation-child.js';
import type { SaturationRow } from './saturation-rows.js';
import { expectChildMessage } from './child-messages.js';

/**
 * One row of the saturation scenario on a fresh redis-server, driven through the client processes
 * (saturation-child.ts): open, warm up, then the cycles and the server's CPU over the same window.
 */

export const SATURATION_CHILD = new URL('./saturation-child.ts', import.meta.url);

export interface SaturationShape {
  /** Client processes per row: one per core. */
  readonly processes: number;
  /** Connections (each with its own library client) per process. */
  readonly connections: number;
  /** Acquire + release loops per connection. */
  readonly loops: number;
  /** ioredis's enableAutoPipelining on the clients' connections. */
  readonly autoPipelining: boolean;
  /** Loops run before the window of a row's first round. */
  readonly warmupMs: number;
  /** The same in later rounds: the processes' code is compiled by then, a fresh server only needs its scripts loaded. */
  readonly laterWarmupMs: number;
  readonly windowMs: number;
  readonly rounds: number;
}

export interface SaturationRound {
  readonly cycles: number;
  readonly errors: number;
  readonly wallS: number;
  /** Redis CPU over the window, s. */
  readonly redisCpuS: number;
  /** CPU of all client processes over the window, s. */
  readonly clientCpuS: number;
  /** Commands Redis ran over the window (INFO commandstats: those inside scripts included, INFO left out). */
  readonly serverCalls: number;
  readonly perRedisCpuS: number;
}

export interface RowRun extends SaturationRound {
  readonly firstError?: string;
  /** Errors the library threw from its own timers in the client processes during this row. */
  readonly stray: number;
}

function sendTo(child: ChildProcess, message: ToSaturationChild): void {
  if (child.connected) child.send(message);
}

function expect<T extends FromSaturationChild['type']>(child: ChildProcess, type: T, ms: number): Promise<Extract<FromSaturationChild, { type: T }>> {
  return expectChildMessage<FromSaturationChild, T>(child, type, ms, 'saturation client');
}

/** Redis CPU of the whole process (s) and the commands it ran, INFO itself left out. */
async function serverState(admin: Redis): Promise<{ cpuS: number; calls: number }> {
  const text = await admin.info('cpu', 'commandstats');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
  let calls = 0;
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (m[1] !== 'info') calls += Number(m[2]);
  return { cpuS: field('used_cpu_user') + field('used_cpu_sys'), calls };
}

/** One row on a fresh server: open, warm up, measure, stop, close. */
export async function measureRow(row: SaturationRow, children: readonly ChildProcess[], shape: SaturationShape, strayBefore: number[]): Promise<RowRun> {
  const server = await RedisServer.start();
  try {
    await Promise.all(
      children.map((child, i) => {
        const ready = expect(child, 'ready', 30_000);
        const init: SaturationInit = { type: 'init', rowId: row.id, port: server.port, process: i, connections: shape.connections, loops: shape.loops, autoPipelining: shape.autoPipelining };
        sendTo(child, init);
        return ready;
      }),
    );
    for (const child of children) sendTo(child, { type: 'go' });
    await sleep(shape.warmupMs);
    const before = await serverState(server.admin);
    const started = performance.now();
    for (const child of children) sendTo(child, { type: 'mark' });
    await sleep(shape.windowMs);
    const after = await serverState(server.admin);
    const wallS = (performance.now() - started) / 1000;
    const done = children.map((child) => expect(child, 'done', 30_000));
    for (const child of children) sendTo(child, { type: 'stop' });
    const reports = await Promise.all(done);
    const closed = children.map((child) => expect(child, 'closed', 30_000));
    for (const child of children) sendTo(child, { type: 'close' });
    const strayNow = (await Promise.all(closed)).map((c) => c.stray);
    const stray = strayNow.reduce((n, s, i) => n + s - (strayBefore[i] ?? 0), 0);
    strayNow.forEach((s, i) => (strayBefore[i] = s));
    const cycles = reports.reduce((n, r) => n + r.cycles, 0);
    const redisCpuS = after.cpuS - before.cpuS;
    const firstError = reports.find((r) => r.firstError)?.firstError;
    return {
      cycles,
      errors: reports.reduce((n, r) => n + r.errors, 0),
      wallS,
      redisCpuS,
      clientCpuS: reports.reduce((n, r) => n + r.cpuUs, 0) / 1e6,
      serverCalls: after.calls - before.calls,
      perRedisCpuS: cycles / redisCpuS,
      stray,
      ...(firstError ? { firstError } : {}),
    };
  } finally {
    await server.stop();
  }
}

