/**
 * Single-flight against "everyone recomputes", on one redis-server the bench starts (`pnpm --filter
 * @holdfast/bench run bench:single-flight`, well under a minute): a cache entry expires and 100 callers, each
 * on a client and a connection of its own (as 100 pods would be), need it at once. - everyone recomputes:
 * each caller GETs the entry, misses, computes it (a 200 ms upstream call) and SETs it: 100 computations; -
 * single-flight: each caller GETs the entry, misses, and calls `locks.singleFlight(key, compute)`: one
 * computes and SETs it, the others wait (woken over pub/sub) and get its value.
 */
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockClient } from '@holdfast/core';
import { diffCounts, snapshotServer, type CommandCount } from './command-counter.js';
import { RedisServer, connect } from './processes.js';
import { median } from './stats.js';

const CALLERS = 100;
const ROUNDS = 7;
const COMPUTE_MS = 200;

interface Round {
  readonly computations: number;
  readonly commands: number;
  readonly cpuUsec: number;
  readonly elapsedMs: number;
  readonly byName: Record<string, number>;
}

async function round(server: RedisServer, clients: readonly LockClient[], redis: readonly ReturnType<typeof connect>[], mode: 'recompute' | 'single-flight', n: number): Promise<Round> {
  const key = `rates:${mode}:${n}`;
  let computations = 0;
  const compute = async () => {
    computations++;
    await sleep(COMPUTE_MS);
    return { eur: 1.08, at: n };
  };
  const before: CommandCount = await snapshotServer([server.admin]);
  const started = performance.now();
  await Promise.all(
    redis.map(async (r, i) => {
      const cached = await r.get(key);
      if (cached !== null) return JSON.parse(cached) as unknown;
      if (mode === 'recompute') {
        const value = await compute();
        await r.set(key, JSON.stringify(value), 'PX', 60_000);
        return value;
      }
      return clients[i]!.singleFlight(key, async () => {
        const value = await compute();
        await r.set(key, JSON.stringify(value), 'PX', 60_000);
        return value;
      }, { leaseMs: 10_000 });
    }),
  );
  const elapsedMs = performance.now() - started;
  const spent = diffCounts(before, await snapshotServer([server.admin]));
  return { computations, commands: spent.total, cpuUsec: spent.usec ?? 0, elapsedMs, byName: Object.fromEntries(spent.byName) };
}

const server = await RedisServer.start();
try {
  const redis = Array.from({ length: CALLERS }, () => connect(server.port));
  const clients = redis.map((r) => new LockClient(r, { prefix: 'bench-sf' }));
  // Every connection and subscriber up, scripts loaded: the rounds measure the steady state.
  await round(server, clients, redis, 'single-flight', -1);
  await round(server, clients, redis, 'recompute', -1);
  const results: Record<string, Round[]> = { recompute: [], 'single-flight': [] };
  for (let n = 0; n < ROUNDS; n++) {
    for (const mode of ['recompute', 'single-flight'] as const) results[mode]!.push(await round(server, clients, redis, mode, n));
  }
  const rows = Object.entries(results).map(([mode, rounds]) => ({
    mode,
    computations: median(rounds.map((r) => r.computations)),
    commands: median(rounds.map((r) => r.commands)),
    cpuMs: median(rounds.map((r) => r.cpuUsec)) / 1_000,
    elapsedMs: median(rounds.map((r) => r.elapsedMs)),
  }));
  const table = [
    '| mode | computations | commands on the server | server CPU (main thread) | until the last caller had it |',
    '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.mode === 'recompute' ? 'everyone recomputes' : 'singleFlight'} | ${r.computations} | ${r.commands} | ${r.cpuMs.toFixed(2)} ms | ${Math.round(r.elapsedMs)} ms |`),
  ].join('\n');
  const notes =
    `${CALLERS} callers, each on a LockClient and a connection of its own, one process; a ${COMPUTE_MS} ms computation; ` +
    `median of ${ROUNDS} rounds after a warm-up round (subscriptions made, scripts loaded). Commands: INFO commandstats ` +
    `(a script's own commands count), from the first GET to the last answer; singleFlight's include the (S)SUBSCRIBEs of the waiting clients' channels.`;
  console.log(`${table}\n\n${notes}`);
  const url = (file: string) => new URL(`../results/${file}`, import.meta.url);
  writeFileSync(url('single-flight.md'), `# Single-flight vs everyone recomputes (one run, ${new Date().toISOString().slice(0, 10)})\n\n${table}\n\n${notes}\n`);
  writeFileSync(url('single-flight.json'), `${JSON.stringify({ date: new Date().toISOString(), rows, raw: results }, null, 2)}\n`);
  await Promise.all(clients.map((c) => c.close()));
  for (const r of redis) r.disconnect();
} finally {
  await server.stop();
}
