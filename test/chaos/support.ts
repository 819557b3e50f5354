import type { Redis } from 'ioredis';
import { checkCounter, type CounterCheck, type HistoryEvent, mergeHistories } from '@holdfast/test-utils/models';
import { WorkerProcess, type WorkerConfig, type WorkerExit } from './workers.js';

/**
 * Lock keys left under `prefix`. Fence counters are meant to stay (they keep
 * tokens increasing across expiry), and so are client registrations until
 * they expire (`<prefix>:client:<id>`), so neither is counted.
 */
export async function keysLeft(redis: Redis, prefix: string): Promise<string[]> {
  const keys = await redis.keys(`${prefix}:*`);
  return keys.filter((key) => !key.endsWith(':fence') && !key.startsWith(`${prefix}:client:`));
}

/** One counter check per counter key the history touched. */
export async function counterChecks(history: readonly HistoryEvent[], resource: Redis): Promise<CounterCheck[]> {
  const keys = [...new Set(history.filter((e) => e.type === 'counter-write').map((e) => e.resource!))];
  return Promise.all(
    keys.map(async (key) => checkCounter(history.filter((e) => e.resource === key), Number((await resource.get(key)) ?? 0))),
  );
}

export interface FleetResult {
  history: HistoryEvent[];
  exits: WorkerExit[];
}

/** Starts worker processes, waits for them all to exit by themselves, merges their histories. */
export async function runFleet(
  configs: WorkerConfig[],
  during?: (workers: WorkerProcess[]) => Promise<void>,
  exitTimeoutMs = 120_000,
): Promise<FleetResult> {
  const workers = configs.map((config) => new WorkerProcess(config));
  try {
    await during?.(workers);
    const exits = await Promise.all(workers.map((worker) => worker.finish(exitTimeoutMs)));
    return { history: mergeHistories(...workers.map((worker) => worker.events)), exits };
  } finally {
    for (const worker of workers) worker.kill();
  }
}

/** Completed new acquisitions in a history. */
export function sectionsCompleted(history: readonly HistoryEvent[]): number {
  return history.filter((e) => e.type === 'acquire-ok' && e.holdCount === 1).length;
}
