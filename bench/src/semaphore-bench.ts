/**
 * Semaphore: holdfast's against redis-semaphore's `Semaphore`, on one local
 * redis-server. Run: `pnpm --filter @holdfast/bench bench:semaphore`.
 *
 * - Uncontended cycle: one worker, acquire one permit of 3 and release it,
 *   `CYCLES` times: latency per cycle (p50 / p99) and server commands per cycle.
 * - Forced hand-offs: 8 workers (each its own connection and client) over 3
 *   permits, each holding its permit `HOLD_MS` and asking again at once, so
 *   every release has waiters. Utilisation: time permits were held / (3 × wall
 *   time). Hand-off gap: from a release's invocation to the next waiter's
 *   start (each start after the first three is matched to the earliest
 *   unmatched release). Wait: from acquire's invocation to its start.
 *   Commands: what the clients sent (holdfast's subscriber connections
 *   included), and what the server ran (commands inside scripts included,
 *   INFO excluded), per cycle or section.
 */
import { LockClient } from '@holdfast/core';
import { Semaphore as RsSemaphore } from 'redis-semaphore';
import type { Redis } from 'ioredis';
import { counted, snapshotClient, snapshotServer, uncounted } from './command-counter.js';
import { connect, RedisServer } from './processes.js';
import { mean, summarize } from './stats.js';

const PERMITS = 3;
const WORKERS = 8;
const CYCLES = 2_000;
const SECTIONS = 800;
const HOLD_MS = 2;

interface Pool {
  acquire(): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

interface Contender {
  readonly label: string;
  readonly settings: string;
  open(port: number, key: string): Promise<Pool>;
}

const holdfast: Contender = {
  label: 'holdfast Semaphore',
  settings: 'LockClient defaults: lease 30 s, FIFO queue, hand-off by the releasing script over pub/sub',
  async open(port, key) {
    const redis = counted(connect(port));
    const locks = new LockClient(redis, { prefix: 'bench' });
    locks.on('error', () => undefined);
    const sem = locks.semaphore(key, { permits: PERMITS });
    return {
      async acquire() {
        const lease = await sem.acquire();
        return () => lease.release();
      },
      async close() {
        await locks.close();
        redis.disconnect();
      },
    };
  },
};

const redisSemaphore: Contender = {
  label: 'redis-semaphore Semaphore',
  settings: 'defaults: retryInterval 10 ms, acquireTimeout 10 s, lockTimeout 10 s, refresh every 8 s',
  async open(port, key) {
    const redis = counted(connect(port));
    return {
      async acquire() {
        const semaphore = new RsSemaphore(redis, key, PERMITS, { onLockLost: () => undefined });
        await semaphore.acquire();
        return () => semaphore.release();
      },
      async close() {
        redis.disconnect();
      },
    };
  },
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

async function uncontended(contender: Contender, server: RedisServer, admin: Redis) {
  const pool = await contender.open(server.port, `u:${contender.label}`);
  for (let i = 0; i < 100; i++) await (await pool.acquire())();
  const before = await snapshotServer([admin]);
  const clientBefore = snapshotClient().total;
  const times: number[] = [];
  for (let i = 0; i < CYCLES; i++) {
    const started = performance.now();
    await (await pool.acquire())();
    times.push((performance.now() - started) * 1000);
  }
  const clientCommands = snapshotClient().total - clientBefore;
  const after = await snapshotServer([admin]);
  await pool.close();
  const s = summarize(times);
  return {
    p50Us: Math.round(s.p50),
    p99Us: Math.round(s.p99),
    client: round(clientCommands / CYCLES),
    server: round((after.total - before.total) / CYCLES),
  };
}

async function contended(contender: Contender, server: RedisServer, admin: Redis) {
  const key = `c:${contender.label}`;
  const pools = await Promise.all(Array.from({ length: WORKERS }, () => contender.open(server.port, key)));
  const waits: number[] = [];
  const held: number[] = [];
  const starts: number[] = [];
  const releases: number[] = [];
  let remaining = SECTIONS;
  const before = await snapshotServer([admin]);
  const clientBefore = snapshotClient().total;
  const begun = performance.now();
  await Promise.all(
    pools.map(async (pool) => {
      while (remaining > 0) {
        remaining--;
        const invoked = performance.now();
        const release = await pool.acquire();
        const start = performance.now();
        starts.push(start);
        waits.push(start - invoked);
        await sleep(HOLD_MS);
        const end = performance.now();
        releases.push(end);
        held.push(end - start);
        await release();
      }
    }),
  );
  const wall = performance.now() - begun;
  const clientCommands = snapshotClient().total - clientBefore;
  const after = await snapshotServer([admin]);
  await Promise.all(pools.map((pool) => pool.close()));
  // Each start after the first PERMITS takes the earliest release not matched yet.
  const sortedStarts = [...starts].sort((a, b) => a - b).slice(PERMITS);
  const sortedReleases = [...releases].sort((a, b) => a - b);
  const gaps: number[] = [];
  let r = 0;
  for (const start of sortedStarts) {
    if (r < sortedReleases.length && sortedReleases[r]! <= start) gaps.push(start - sortedReleases[r++]!);
  }
  const w = summarize(waits);
  const g = summarize(gaps);
  return {
    utilisationPct: round((100 * held.reduce((a, b) => a + b, 0)) / (PERMITS * wall), 1),
    gapMeanMs: round(mean(gaps)),
    gapP99Ms: round(g.p99),
    waitP50Ms: round(w.p50),
    waitP99Ms: round(w.p99),
    client: round(clientCommands / SECTIONS),
    server: round((after.total - before.total) / SECTIONS, 1),
  };
}

const server = await RedisServer.start();
try {
  const admin = uncounted(server.admin);
  console.log(`Semaphore: ${PERMITS} permits; uncontended ${CYCLES} cycles; ${WORKERS} workers × ${SECTIONS} sections of ${HOLD_MS} ms (redis-server, loopback)`);
  console.log(
    '| library | uncontended p50 / p99 | client / server commands per cycle | utilisation | hand-off gap mean / p99 | wait p50 / p99 | client / server commands per section |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const contender of [holdfast, redisSemaphore]) {
    const u = await uncontended(contender, server, admin);
    const c = await contended(contender, server, admin);
    console.log(
      `| ${contender.label} | ${u.p50Us} / ${u.p99Us} µs | ${u.client} / ${u.server} | ${c.utilisationPct} % | ${c.gapMeanMs} / ${c.gapP99Ms} ms | ` +
        `${c.waitP50Ms} / ${c.waitP99Ms} ms | ${c.client} / ${c.server} |`,
    );
  }
  for (const contender of [holdfast, redisSemaphore]) console.log(`- ${contender.label}: ${contender.settings}`);
} finally {
  await server.stop();
}
