import { LockClient, type Lease } from '@holdfast/core';
import { commandStats, commandStatsDelta, startRedis } from '@holdfast/test-utils';
import { summarize } from './stats.js';

/**
 * `pnpm --filter @holdfast/bench run bench:read-write`: a read-heavy workload
 * on one name, 1 section in 10 a write, the rest reads, each section holding
 * the lock over 2 ms of simulated I/O. WORKERS async workers over 4 clients
 * (one connection each) run SECTIONS sections each, on holdfast's read-write
 * lock and, for comparison, on its mutex (every section exclusive). Prints
 * throughput, waits (p50 / p99), the most readers inside at once, the
 * script calls sent per section and every command Redis ran per section
 * (commandstats, which counts the commands run inside scripts too).
 */

const WORKERS = Number(process.env['WORKERS'] ?? 16);
const SECTIONS = Number(process.env['SECTIONS'] ?? 150);
const WORK_MS = 2;

interface Result {
  label: string;
  seconds: number;
  reads: number;
  writes: number;
  readWaits: number[];
  writeWaits: number[];
  mostReaders: number;
  /** Script calls (EVALSHA / EVAL) the clients sent, per section. */
  scriptsPerSection: number;
  /** Every command Redis ran, those inside scripts included, per section. */
  commandsPerSection: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(label: string, mode: 'rw' | 'mutex', url: { host: string; port: number }): Promise<Result> {
  const server = { ...url };
  const { Redis } = await import('ioredis');
  const admin = new Redis(server);
  const redis = Array.from({ length: 4 }, () => new Redis(server));
  const clients = redis.map((r) => new LockClient(r, { prefix: `bench-${mode}` }));
  const name = 'doc';
  const result: Result = { label, seconds: 0, reads: 0, writes: 0, readWaits: [], writeWaits: [], mostReaders: 0, scriptsPerSection: 0, commandsPerSection: 0 };
  let readersInside = 0;
  const section = async (client: LockClient, write: boolean) => {
    const started = performance.now();
    const lease: Lease =
      mode === 'mutex'
        ? await client.lock(name).acquire()
        : write
          ? await client.readWriteLock(name).write.acquire()
          : await client.readWriteLock(name).read.acquire();
    (write ? result.writeWaits : result.readWaits).push(performance.now() - started);
    if (!write) result.mostReaders = Math.max(result.mostReaders, ++readersInside);
    await sleep(WORK_MS);
    if (!write) readersInside--;
    await lease.release();
    if (write) result.writes++;
    else result.reads++;
  };
  // Warm-up: scripts cached, channels subscribed.
  await Promise.all(clients.map((c, i) => section(c, i === 0)));
  result.reads = result.writes = result.mostReaders = 0;
  result.readWaits.length = result.writeWaits.length = 0;
  const before = await commandStats(admin);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      for (let i = 0; i < SECTIONS; i++) await section(clients[w % clients.length]!, (i + w) % 10 === 0);
    }),
  );
  result.seconds = (performance.now() - started) / 1000;
  const delta = commandStatsDelta(before, await commandStats(admin));
  const calls = Object.entries(delta)
    .filter(([cmd]) => cmd !== 'info')
    .reduce((sum, [, n]) => sum + n, 0);
  const sections = result.reads + result.writes;
  result.commandsPerSection = calls / sections;
  result.scriptsPerSection = ((delta['evalsha'] ?? 0) + (delta['eval'] ?? 0)) / sections;
  await Promise.all(clients.map((c) => c.close()));
  for (const r of [...redis, admin]) r.disconnect();
  return result;
}

const server = await startRedis();
try {
  const results: Result[] = [];
  for (let round = 1; round <= 2; round++) {
    results.push(await run(`read-write lock (round ${round})`, 'rw', server));
    results.push(await run(`mutex, every section exclusive (round ${round})`, 'mutex', server));
  }
  console.log(`${WORKERS} workers over 4 clients, ${SECTIONS} sections each, 1 in 10 a write, ${WORK_MS} ms held per section`);
  console.log('| lock | reads/s | writes/s | read wait p50 / p99 ms | write wait p50 / p99 ms | most readers inside | scripts / section | commands / section |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    const rw = summarize(r.readWaits);
    const ww = summarize(r.writeWaits);
    console.log(
      `| ${r.label} | ${Math.round(r.reads / r.seconds)} | ${Math.round(r.writes / r.seconds)} | ` +
        `${rw.p50.toFixed(1)} / ${rw.p99.toFixed(1)} | ${ww.p50.toFixed(1)} / ${ww.p99.toFixed(1)} | ${r.mostReaders} | ${r.scriptsPerSection.toFixed(2)} | ${r.commandsPerSection.toFixed(1)} |`,
    );
  }
} finally {
  await server.stop();
}
