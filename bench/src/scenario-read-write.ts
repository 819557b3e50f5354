import { LockClient, type Lease } from '@holdfast/core';
import { commandStats, commandStatsDelta } from '@holdfast/test-utils';
import type { Sizes } from './options.js';
import { connect, type RedisServer } from './processes.js';
import { median, summarize } from './stats.js';

/**
 * A read-heavy workload on one name, 1 section in 10 a write, the rest reads, each section holding the lock
 * `sectionMs` of simulated I/O.
 */

export const READ_WRITE_WORKERS = 16;
const CLIENTS = 4;

export interface ReadWriteRound {
  readonly readsPerSec: number;
  readonly writesPerSec: number;
  readonly readWait: { p50: number; p99: number };
  readonly writeWait: { p50: number; p99: number };
  readonly mostReaders: number;
  /** Script calls (EVALSHA / EVAL) the clients sent, per section. */
  readonly scriptsPerSection: number;
  /** Every command Redis ran, those inside scripts included, per section. */
  readonly commandsPerSection: number;
}

export interface ReadWriteResult {
  readonly mode: 'read-write' | 'mutex';
  readonly label: string;
  readonly rounds: ReadWriteRound[];
  /** Readers' throughput over the mutex's of the same round, median over the rounds. */
  readonly readRatio: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(mode: ReadWriteResult['mode'], server: RedisServer, sizes: Sizes, round: number): Promise<ReadWriteRound> {
  const redis = Array.from({ length: CLIENTS }, () => connect(server.port));
  const clients = redis.map((r) => new LockClient(r, { prefix: `bench-${mode}` }));
  const name = `doc:${round}`;
  const readWaits: number[] = [];
  const writeWaits: number[] = [];
  let reads = 0;
  let writes = 0;
  let mostReaders = 0;
  let readersInside = 0;
  const section = async (client: LockClient, write: boolean) => {
    const started = performance.now();
    const lease: Lease =
      mode === 'mutex'
        ? await client.lock(name).acquire()
        : write
          ? await client.readWriteLock(name).write.acquire()
          : await client.readWriteLock(name).read.acquire();
    (write ? writeWaits : readWaits).push(performance.now() - started);
    if (!write) mostReaders = Math.max(mostReaders, ++readersInside);
    await sleep(sizes.sectionMs);
    if (!write) readersInside--;
    await lease.release();
    if (write) writes++;
    else reads++;
  };
  // Warm-up: scripts cached, channels subscribed.
  await Promise.all(clients.map((c, i) => section(c, i === 0)));
  reads = writes = mostReaders = 0;
  readWaits.length = writeWaits.length = 0;
  const before = await commandStats(server.admin);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: READ_WRITE_WORKERS }, async (_, w) => {
      for (let i = 0; i < sizes.readWriteSections; i++) await section(clients[w % CLIENTS]!, (i + w) % 10 === 0);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const delta = commandStatsDelta(before, await commandStats(server.admin));
  const calls = Object.entries(delta)
    .filter(([cmd]) => cmd !== 'info')
    .reduce((sum, [, n]) => sum + n, 0);
  const sections = reads + writes;
  await Promise.all(clients.map((c) => c.close()));
  for (const r of redis) r.disconnect();
  const rw = summarize(readWaits);
  const ww = summarize(writeWaits);
  return {
    readsPerSec: reads / seconds,
    writesPerSec: writes / seconds,
    readWait: { p50: rw.p50, p99: rw.p99 },
    writeWait: { p50: ww.p50, p99: ww.p99 },
    mostReaders,
    scriptsPerSection: ((delta['evalsha'] ?? 0) + (delta['eval'] ?? 0)) / sections,
    commandsPerSection: calls / sections,
  };
}

export async function runReadWrite(server: RedisServer, sizes: Sizes, log: (line: string) => void): Promise<ReadWriteResult[]> {
  const modes = [
    { mode: 'read-write', label: 'holdfast read-write lock' },
    { mode: 'mutex', label: 'holdfast mutex, every section exclusive' },
  ] as const;
  const rounds: Record<ReadWriteResult['mode'], ReadWriteRound[]> = { 'read-write': [], mutex: [] };
  for (let round = 0; round < sizes.latencyRounds; round++) {
    for (const { mode, label } of round % 2 ? [...modes].reverse() : modes) {
      const r = await run(mode, server, sizes, round);
      rounds[mode].push(r);
      log(`  round ${round + 1} ${label}: ${Math.round(r.readsPerSec)} reads/s, ${Math.round(r.writesPerSec)} writes/s, read wait p99 ${r.readWait.p99.toFixed(1)} ms`);
    }
  }
  return modes.map(({ mode, label }) => ({
    mode,
    label,
    rounds: rounds[mode],
    readRatio: median(rounds[mode].map((r, i) => r.readsPerSec / rounds.mutex[i]!.readsPerSec)),
  }));
}
