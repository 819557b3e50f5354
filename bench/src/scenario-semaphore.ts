/**
 * Semaphore: holdfast's against redis-semaphore's `Semaphore`, on one local redis-server, in `pnpm bench`
 * (`--only semaphore` for this scenario alone). - Uncontended cycle: one worker, acquire one permit of 3 and
 * release it, `semaphoreCycles` times: latency per cycle (p50 / p99) and commands per cycle. - Forced
 * hand-offs: 8 workers (each its own connection and client) over 3 permits, each holding its permit
 * `sectionMs` and asking again at once, so every release has waiters.
 */
import { LockClient } from '@holdfast/core';
import { Semaphore as RsSemaphore } from 'redis-semaphore';
import type { Redis } from 'ioredis';
import { counted, snapshotClient, snapshotServer, uncounted } from './command-counter.js';
import type { Sizes } from './options.js';
import { connect, type RedisServer } from './processes.js';
import { mean, median, summarize } from './stats.js';

export const SEMAPHORE_PERMITS = 3;
const WARMUP_CYCLES = 100;

/** One permit held; releasing it gives it back. */
interface Permit {
  release(): Promise<void>;
}

/** One worker's semaphore on a connection of its own. */
interface Pool {
  acquire(): Promise<Permit>;
  close(): Promise<void>;
}

interface Contender {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  /** The library's semaphore on `key` over `redis`; its `close()` leaves `redis` to the caller. */
  semaphore(redis: Redis, key: string): Pool;
}

const holdfast: Contender = {
  id: 'holdfast',
  label: 'holdfast Semaphore',
  settings: 'LockClient defaults: lease 30 s, FIFO queue, hand-off by the releasing script over pub/sub',
  semaphore(redis, key) {
    const locks = new LockClient(redis, { prefix: 'bench' });
    locks.on('error', () => undefined);
    const sem = locks.semaphore(key, { permits: SEMAPHORE_PERMITS });
    return { acquire: () => sem.acquire(), close: () => locks.close() };
  },
};

const redisSemaphore: Contender = {
  id: 'redis-semaphore',
  label: 'redis-semaphore Semaphore',
  settings: 'defaults: retryInterval 10 ms, acquireTimeout 10 s, lockTimeout 10 s, refresh every 8 s',
  semaphore(redis, key) {
    return {
      async acquire() {
        const semaphore = new RsSemaphore(redis, key, SEMAPHORE_PERMITS, { onLockLost: () => undefined });
        await semaphore.acquire();
        return semaphore;
      },
      close: async () => undefined,
    };
  },
};

/** A contender's semaphore on a new counted connection, closed with it. */
function open(contender: Contender, port: number, key: string): Pool {
  const redis = counted(connect(port));
  const pool = contender.semaphore(redis, key);
  return {
    acquire: () => pool.acquire(),
    async close() {
      await pool.close();
      redis.disconnect();
    },
  };
}

export const SEMAPHORE_CONTENDERS: readonly Contender[] = [holdfast, redisSemaphore];

/** One library's figures in one round. */
export interface SemaphoreRound {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly clientPerCycle: number;
  readonly serverPerCycle: number;
  readonly utilisation: number;
  readonly gapMeanMs: number;
  readonly gapP99Ms: number;
  readonly waitP50Ms: number;
  readonly waitP99Ms: number;
  readonly clientPerSection: number;
  readonly serverPerSection: number;
}

export interface SemaphoreResult extends SemaphoreRound {
  readonly id: string;
  readonly label: string;
  readonly settings: string;
  readonly rounds: SemaphoreRound[];
  /** Over redis-semaphore's of the same round, median over the rounds (1 for redis-semaphore itself). */
  readonly ratio: { readonly p50: number; readonly utilisation: number; readonly waitP99: number; readonly serverPerSection: number };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function uncontended(contender: Contender, server: RedisServer, admin: Redis, cycles: number, round: number) {
  const pool = open(contender, server.port, `u${round}:${contender.id}`);
  for (let i = 0; i < WARMUP_CYCLES; i++) await (await pool.acquire()).release();
  const before = await snapshotServer([admin]);
  const clientBefore = snapshotClient().total;
  const times: number[] = [];
  for (let i = 0; i < cycles; i++) {
    const started = performance.now();
    await (await pool.acquire()).release();
    times.push((performance.now() - started) * 1000);
  }
  const clientCommands = snapshotClient().total - clientBefore;
  const after = await snapshotServer([admin]);
  await pool.close();
  const s = summarize(times);
  return { p50Us: s.p50, p99Us: s.p99, clientPerCycle: clientCommands / cycles, serverPerCycle: (after.total - before.total) / cycles };
}

async function contended(contender: Contender, server: RedisServer, admin: Redis, sizes: Sizes, round: number) {
  const key = `c${round}:${contender.id}`;
  const pools = Array.from({ length: sizes.workers }, () => open(contender, server.port, key));
  const waits: number[] = [];
  const held: number[] = [];
  const starts: number[] = [];
  const releases: number[] = [];
  let remaining = sizes.semaphoreSections;
  const before = await snapshotServer([admin]);
  const clientBefore = snapshotClient().total;
  const begun = performance.now();
  await Promise.all(
    pools.map(async (pool) => {
      while (remaining > 0) {
        remaining--;
        const invoked = performance.now();
        const permit = await pool.acquire();
        const start = performance.now();
        starts.push(start);
        waits.push(start - invoked);
        await sleep(sizes.sectionMs);
        const end = performance.now();
        releases.push(end);
        held.push(end - start);
        await permit.release();
      }
    }),
  );
  const wall = performance.now() - begun;
  const clientCommands = snapshotClient().total - clientBefore;
  const after = await snapshotServer([admin]);
  await Promise.all(pools.map((pool) => pool.close()));
  // Each start after the first SEMAPHORE_PERMITS takes the earliest release not matched yet.
  const sortedStarts = [...starts].sort((a, b) => a - b).slice(SEMAPHORE_PERMITS);
  const sortedReleases = [...releases].sort((a, b) => a - b);
  const gaps: number[] = [];
  let r = 0;
  for (const start of sortedStarts) {
    if (r < sortedReleases.length && sortedReleases[r]! <= start) gaps.push(start - sortedReleases[r++]!);
  }
  const w = summarize(waits);
  const sections = starts.length;
  return {
    utilisation: held.reduce((a, b) => a + b, 0) / (SEMAPHORE_PERMITS * wall),
    gapMeanMs: mean(gaps),
    gapP99Ms: summarize(gaps).p99,
    waitP50Ms: w.p50,
    waitP99Ms: w.p99,
    clientPerSection: clientCommands / sections,
    serverPerSection: (after.total - before.total) / sections,
  };
}

/** Every contender wanted, `sizes.latencyRounds` rounds, libraries in turn (rotated each round). */
export async function runSemaphore(
  contenders: readonly Contender[],
  server: RedisServer,
  sizes: Sizes,
  log: (line: string) => void,
): Promise<SemaphoreResult[]> {
  const admin = uncounted(server.admin);
  const rounds = new Map<string, SemaphoreRound[]>(contenders.map((c) => [c.id, []]));
  for (let round = 0; round < sizes.latencyRounds; round++) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
    for (const contender of order) {
      const u = await uncontended(contender, server, admin, sizes.semaphoreCycles, round);
      const c = await contended(contender, server, admin, sizes, round);
      rounds.get(contender.id)!.push({ ...u, ...c });
      log(
        `  round ${round + 1} ${contender.label}: uncontended p50 ${Math.round(u.p50Us)} µs; utilisation ${c.utilisation.toFixed(2)}, ` +
          `hand-off gap ${c.gapMeanMs.toFixed(2)} ms, wait p99 ${c.waitP99Ms.toFixed(1)} ms`,
      );
    }
  }
  const base = rounds.get(redisSemaphore.id);
  const ratio = (mine: SemaphoreRound[], pick: (r: SemaphoreRound) => number) =>
    base ? median(mine.map((r, i) => pick(r) / pick(base[i]!))) : Number.NaN;
  return contenders.map((c) => {
    const mine = rounds.get(c.id)!;
    const mid = (pick: (r: SemaphoreRound) => number) => median(mine.map(pick));
    return {
      id: c.id,
      label: c.label,
      settings: c.settings,
      rounds: mine,
      p50Us: mid((r) => r.p50Us),
      p99Us: mid((r) => r.p99Us),
      clientPerCycle: mid((r) => r.clientPerCycle),
      serverPerCycle: mid((r) => r.serverPerCycle),
      utilisation: mid((r) => r.utilisation),
      gapMeanMs: mid((r) => r.gapMeanMs),
      gapP99Ms: mid((r) => r.gapP99Ms),
      waitP50Ms: mid((r) => r.waitP50Ms),
      waitP99Ms: mid((r) => r.waitP99Ms),
      clientPerSection: mid((r) => r.clientPerSection),
      serverPerSection: mid((r) => r.serverPerSection),
      ratio: {
        p50: ratio(mine, (r) => r.p50Us),
        utilisation: ratio(mine, (r) => r.utilisation),
        waitP99: ratio(mine, (r) => r.waitP99Ms),
        serverPerSection: ratio(mine, (r) => r.serverPerSection),
      },
    };
  });
}
