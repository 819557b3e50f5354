import { FaultProxy, startRedis, uniqueName, waitFor, type RedisServer, type StartRedisOptions } from '@holdfast/test-utils';
import { checkHistory, type CheckResult, type CounterCheck, type HistoryEvent } from '@holdfast/test-utils/models';
import type { Nemesis } from './nemesis/storm.js';
import { SIZES } from './sizes.js';
import { counterChecks, keysLeft, runFleet, sectionsCompleted } from './support.js';
import { assertBuilt, cleanExit, type WorkerConfig, type WorkerExit } from './workers.js';

export interface StormTarget {
  server: RedisServer;
  proxy: FaultProxy | undefined;
  prefix: string;
}

export interface StormOutcome {
  check: CheckResult;
  history: HistoryEvent[];
  exits: WorkerExit[];
  unclean: WorkerExit[];
  counters: CounterCheck[];
  sections: number;
  /** Longest time from acquire invoke to ok, ms. */
  maxWaitMs: number;
  lost: Record<string, number>;
  /** Sections that ended with a holdfast error, by code (timeouts under faults, losses). */
  failed: Record<string, number>;
  keysLeft: string[];
  nemesis: { applied: number; failed: number };
}

/**
 * 2 processes × 2 workers run renewed critical sections on one lock server
 * (through a fault proxy when asked) while a nemesis acts on it; the fenced
 * resource and the counter live on a second server that is never faulted.
 */
export async function runStorm(options: {
  nemesis: (target: StormTarget) => Nemesis;
  viaProxy?: boolean;
  server?: StartRedisOptions;
  worker?: Partial<WorkerConfig>;
}): Promise<StormOutcome> {
  assertBuilt();
  const server = await startRedis(options.server);
  const resourceServer = await startRedis();
  const proxy = options.viaProxy ? await FaultProxy.start(server) : undefined;
  try {
    const prefix = uniqueName('chaos');
    const redisUrl = proxy ? proxy.url : server.url;
    const configs: WorkerConfig[] = [0, 1].map((p) => ({
      proc: `p${p}`,
      redisUrl,
      resourceUrl: resourceServer.url,
      prefix,
      workers: 2,
      // The storm runs stormMs from the workers' first sections: room for start-up.
      durationMs: SIZES.stormMs + 1_000,
      locks: ['s1', 's2'],
      watchdogMs: 1_000,
      waitMs: 3_000,
      holdMs: [0, 5],
      reentryRate: 0.1,
      commandTimeoutMs: 500,
      ...options.worker,
    }));
    let nemesis: Nemesis | undefined;
    const { history, exits } = await runFleet(configs, async (workers) => {
      // Faults start once every worker process works (node start-up on a busy
      // machine can take seconds): a storm over idle workers would test nothing.
      const working = (e: HistoryEvent) => e.type === 'acquire-ok';
      await Promise.all(workers.map((w) => (w.events.some(working) ? undefined : w.next(working))));
      nemesis = options.nemesis({ server, proxy, prefix });
      await new Promise((resolve) => setTimeout(resolve, SIZES.stormMs));
      await nemesis.stop();
    });
    const resource = resourceServer.client();
    const counters = await counterChecks(history, resource);
    const admin = server.client();
    // Leases given up under faults run out by their TTL (the watchdog's 1 s).
    let left: string[] = [];
    await waitFor(async () => (left = await keysLeft(admin, prefix)).length === 0, { timeoutMs: 5_000 }).catch(() => {});
    const lost = tally(history.filter((e) => e.type === 'lost'));
    const failed = tally(history.filter((e) => e.type === 'acquire-fail'));
    return {
      check: checkHistory(history),
      history,
      exits,
      unclean: exits.filter((exit) => !cleanExit(exit)),
      counters,
      sections: sectionsCompleted(history),
      maxWaitMs: maxWaitMs(history),
      lost,
      failed,
      keysLeft: left,
      nemesis: { ...nemesis!.stats },
    };
  } finally {
    await proxy?.close();
    await Promise.all([server.stop(), resourceServer.stop()]);
  }
}

function maxWaitMs(history: readonly HistoryEvent[]): number {
  const invoked = new Map<string, bigint>();
  let max = 0n;
  for (const e of history) {
    if (e.type === 'acquire-invoke') invoked.set(e.holder, e.t);
    if (e.type === 'acquire-ok' && e.holdCount === 1) {
      const t = invoked.get(e.holder);
      if (t !== undefined && e.t - t > max) max = e.t - t;
    }
  }
  return Number(max / 1_000_000n);
}

function tally(events: readonly HistoryEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) counts[e.reason ?? '?'] = (counts[e.reason ?? '?'] ?? 0) + 1;
  return counts;
}

/** `expired 2, deleted 5` */
export function formatLost(lost: Record<string, number>): string {
  const entries = Object.entries(lost);
  return entries.length === 0 ? 'none' : entries.map(([reason, n]) => `${reason} ${n}`).join(', ');
}
