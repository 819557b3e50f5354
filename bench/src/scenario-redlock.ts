import { setTimeout as sleep } from 'node:timers/promises';
import type { Sizes } from './options.js';
import { RedisServer } from './processes.js';
import type { MultiLibrary } from './redlock-libraries.js';
import { runUncontended, timeCycles, type UncontendedResult } from './scenario-uncontended.js';
import { summarize, type Summary } from './stats.js';

/** Scenario 4: Redlock over independent instances. */

export interface RedlockUncontended {
  readonly instances: number;
  readonly results: UncontendedResult[];
}

export interface KillResult {
  readonly id: string;
  readonly label: string;
  readonly cyclesBefore: number;
  readonly cyclesAfter: number;
  readonly acquireBefore: Summary;
  /** Acquisitions that ended after the kill (including those in flight at the kill), ms. */
  readonly acquireAfter: Summary;
  /** Longest acquire + release cycle that ended after the kill, ms. */
  readonly longestCycleAfterMs: number;
  readonly failedAcquires: number;
  readonly errors: Record<string, number>;
  /** True when a call was still pending at the cap. */
  readonly stalledAtCap: boolean;
  /** How long that call had been pending, ms. */
  readonly pendingAtCapMs: number;
  readonly runMs: number;
}

export async function runRedlockUncontended(
  libraries: readonly MultiLibrary[],
  servers: readonly RedisServer[],
  sizes: Sizes,
  log: (line: string) => void,
): Promise<RedlockUncontended[]> {
  const out: RedlockUncontended[] = [];
  for (const instances of [3, 5]) {
    const ports = servers.slice(0, instances).map((s) => s.port);
    log(` ${instances} instances`);
    const results = await runUncontended(
      libraries.map((lib) => ({ id: lib.id, label: lib.label, settings: lib.settings, open: () => lib.open(ports) })),
      servers.slice(0, instances).map((s) => s.admin),
      { warmup: sizes.warmupCycles, cycles: sizes.redlockCycles, rounds: sizes.latencyRounds, floorId: 'floor', log },
    );
    out.push({ instances, results });
  }
  return out;
}

const PENDING = Symbol('pending');

function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof PENDING> {
  promise.catch(() => undefined);
  return Promise.race([promise, sleep(Math.max(0, ms)).then((): typeof PENDING => PENDING)]);
}

function errorName(error: unknown): string {
  return error instanceof Error ? (error.name === 'Error' ? error.message.slice(0, 50) : error.name) : String(error);
}

export async function runKill(lib: MultiLibrary, sizes: Sizes): Promise<KillResult> {
  const servers = await RedisServer.startMany(3);
  const locker = await lib.open(servers.map((s) => s.port));
  const key = `bench-kill-${lib.id.replace(/:/g, '-')}`;
  try {
    await timeCycles(locker, key, 20);
    const t0 = performance.now();
    const capAt = t0 + sizes.killCapMs;
    const endAt = Math.min(capAt, t0 + sizes.killAfterMs + sizes.afterKillMs);
    let killedAt = Infinity;
    const killer = setTimeout(() => {
      killedAt = performance.now();
      servers[1]!.crash();
    }, sizes.killAfterMs);
    const before: number[] = [];
    const after: number[] = [];
    let longestCycleAfterMs = 0;
    let failedAcquires = 0;
    let stalledAtCap = false;
    let pendingAtCapMs = 0;
    const errors: Record<string, number> = {};
    while (performance.now() < endAt) {
      const started = performance.now();
      let release;
      try {
        release = await within(locker.acquire(key), capAt - started);
      } catch (error) {
        failedAcquires++;
        const name = errorName(error);
        errors[name] = (errors[name] ?? 0) + 1;
        (performance.now() > killedAt ? after : before).push(performance.now() - started);
        await sleep(1);
        continue;
      }
      const acquired = performance.now();
      if (release === PENDING) {
        stalledAtCap = true;
        pendingAtCapMs = acquired - started;
        after.push(pendingAtCapMs);
        break;
      }
      (acquired > killedAt ? after : before).push(acquired - started);
      let released: unknown;
      try {
        released = await within(release(), capAt - acquired);
      } catch (error) {
        const name = `release: ${errorName(error)}`;
        errors[name] = (errors[name] ?? 0) + 1;
      }
      const ended = performance.now();
      if (ended > killedAt) longestCycleAfterMs = Math.max(longestCycleAfterMs, ended - started);
      if (released === PENDING) {
        stalledAtCap = true;
        pendingAtCapMs = ended - acquired;
        break;
      }
    }
    clearTimeout(killer);
    return {
      id: lib.id,
      label: lib.label,
      cyclesBefore: before.length,
      cyclesAfter: after.length,
      acquireBefore: summarize(before),
      acquireAfter: summarize(after),
      longestCycleAfterMs,
      failedAcquires,
      errors,
      stalledAtCap,
      pendingAtCapMs,
      runMs: performance.now() - t0,
    };
  } finally {
    await locker.close().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
  }
}
