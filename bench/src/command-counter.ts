import type { Redis } from 'ioredis';

/**
 * Client side: what the process sent. ioredis routes every command through `sendCommand` (plain calls,
 * scripts defined with `defineCommand`, the EVAL fallback after NOSCRIPT, pipelines and MULTI at exec time,
 * SUBSCRIBE on duplicated subscriber connections), so wrapping it on the class counts every library the same
 * way, including connections a library creates on its own (node-redisson, holdfast's subscriber).
 */

export interface CommandCount {
  total: number;
  readonly byName: Map<string, number>;
  /** Server side only: CPU time of the server's main thread (INFO cpu), in µs: commands, scripts and their network I/O. */
  usec?: number;
}

const counts: CommandCount = { total: 0, byName: new Map() };
const excluded = new WeakSet<object>();
const patched = new WeakSet<object>();
const PATCHED = Symbol.for('holdfast-bench.sendCommand');

interface Sendable {
  status?: string;
  sendCommand(command: { name?: string }, ...rest: unknown[]): unknown;
}

function patchPrototypeOf(instance: object): void {
  let proto: object | null = Object.getPrototypeOf(instance);
  while (proto && !Object.prototype.hasOwnProperty.call(proto, 'sendCommand')) proto = Object.getPrototypeOf(proto);
  if (!proto || patched.has(proto)) return;
  const target = proto as Sendable & { [PATCHED]?: true };
  if (target[PATCHED]) return;
  const original = target.sendCommand;
  target.sendCommand = function (this: Sendable, command, ...rest) {
    if (this.status === 'ready' && !excluded.has(this)) {
      counts.total++;
      const name = String(command?.name ?? '?').toLowerCase();
      counts.byName.set(name, (counts.byName.get(name) ?? 0) + 1);
    }
    return original.call(this, command, ...rest);
  };
  target[PATCHED] = true;
  patched.add(proto);
}

/**
 * Counts one command a client sent outside ioredis' `sendCommand` (node-redis: see node-redis-clients.ts), in
 * the same totals.
 */
export function countSent(name: string): void {
  counts.total++;
  const key = name.toLowerCase();
  counts.byName.set(key, (counts.byName.get(key) ?? 0) + 1);
}

/** Start counting commands of this client's class (idempotent). Returns the client. */
export function counted<T extends object>(client: T): T {
  patchPrototypeOf(client);
  return client;
}

/** Never count this connection (bench bookkeeping: INFO, FLUSHALL, PING). */
export function uncounted<T extends object>(client: T): T {
  excluded.add(client);
  patchPrototypeOf(client);
  return client;
}

export function snapshotClient(): CommandCount {
  return { total: counts.total, byName: new Map(counts.byName) };
}

export function diffCounts(before: CommandCount, after: CommandCount): CommandCount {
  const byName = new Map<string, number>();
  for (const [name, n] of after.byName) {
    const d = n - (before.byName.get(name) ?? 0);
    if (d > 0) byName.set(name, d);
  }
  const diff: CommandCount = { total: after.total - before.total, byName };
  if (after.usec !== undefined) diff.usec = after.usec - (before.usec ?? 0);
  return diff;
}

export function addCounts(a: CommandCount, b: CommandCount): CommandCount {
  const byName = new Map(a.byName);
  for (const [name, n] of b.byName) byName.set(name, (byName.get(name) ?? 0) + n);
  const sum: CommandCount = { total: a.total + b.total, byName };
  if (a.usec !== undefined || b.usec !== undefined) sum.usec = (a.usec ?? 0) + (b.usec ?? 0);
  return sum;
}

/**
 * Server side: INFO commandstats, which counts the commands a script runs as well as the EVALSHA itself, and
 * INFO cpu.
 */
export async function snapshotServer(admins: readonly Redis[]): Promise<CommandCount> {
  let total: CommandCount = { total: 0, byName: new Map() };
  for (const admin of admins) {
    const text = await admin.info('commandstats', 'cpu');
    const byName = new Map<string, number>();
    let sum = 0;
    for (const match of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      const name = match[1]!;
      if (name === 'info') continue;
      const calls = Number(match[2]);
      byName.set(name, calls);
      sum += calls;
    }
    // The main thread runs every command and script and does the network I/O
    // of every client (no io-threads here); its CPU is what a cycle costs the server.
    const cpu = (field: string) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(text)?.[1] ?? Number.NaN);
    const usec = Math.round((cpu('used_cpu_user_main_thread') + cpu('used_cpu_sys_main_thread')) * 1e6);
    total = addCounts(total, { total: sum, byName, usec });
  }
  return total;
}

/** "evalsha 2, subscribe 0.01" per unit, largest first. */
export function describePer(count: CommandCount, units: number): string {
  return [...count.byName]
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${round(n / units)}`)
    .join(', ');
}

export function toPlain(count: CommandCount): { total: number; byName: Record<string, number> } {
  return { total: count.total, byName: Object.fromEntries(count.byName) };
}

export function fromPlain(plain: { total: number; byName: Record<string, number> }): CommandCount {
  return { total: plain.total, byName: new Map(Object.entries(plain.byName)) };
}

function round(n: number): number {
  return n >= 10 ? Math.round(n * 10) / 10 : Math.round(n * 100) / 100;
}
