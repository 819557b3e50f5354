/**
 * Leader election, holdfast side by side with the `redis-leader` npm package, in one run on one redis-server
 * the bench starts (`pnpm --filter @holdfast/bench run bench:election`, under a minute): - failover after a
 * resignation: from `resign()` (redis-leader: `stop()`) to the next candidate's election, p50 / p99; -
 * failover after a crash: the leader's connection dropped and its renewals stopped, without resigning; the
 * time from the end of its term (its key's PTTL at the crash) to the next candidate's election; - idle cost:
 * commands per second the clients send while 1 leader, 50 candidates and 50 observers wait (redis-leader has
 * no observer: its observers GET the leader key once a `wait`, as its users do).
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockClient, type Term } from '@holdfast/core';
import type { Redis } from 'ioredis';
import { counted, diffCounts, snapshotClient } from './command-counter.js';
import { RedisServer, connect } from './processes.js';

interface LeaderLike extends NodeJS.EventEmitter {
  readonly redis: Redis;
  renewId?: NodeJS.Timeout;
  electId?: NodeJS.Timeout;
  elect(): void;
  stop(): void;
}
const RedisLeader = createRequire(import.meta.url)('redis-leader') as new (redis: Redis, options: { key: string; ttl?: number; wait?: number }) => LeaderLike;

const TERM_MS = 10_000;
const CRASH_TERM_MS = 1_000;
const RESIGN_RUNS = { holdfast: 200, 'redis-leader': 15 };
const CRASH_RUNS = 5;
const IDLE_TERM_MS = 2_000;
const IDLE_WINDOW_MS = 6_000;
const CANDIDATES = 50;
const OBSERVERS = 50;

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
const ms = (value: number) => `${value < 10 ? value.toFixed(2) : Math.round(value)} ms`;
const once = (emitter: NodeJS.EventEmitter, event: string) => new Promise<void>((resolve) => emitter.once(event, () => resolve()));
const leaderKey = (key: string) => `leader:${createHash('sha1').update(key).digest('hex')}`;

async function holdfastResign(server: RedisServer): Promise<number[]> {
  const clients = [0, 1].map(() => new LockClient(counted(connect(server.port)), { prefix: 'bench-el' }));
  const elections = clients.map((c) => c.election('resign', { termMs: TERM_MS }));
  const times: number[] = [];
  let term = await elections[0]!.campaign({ value: '0' });
  for (let i = 0; i < RESIGN_RUNS.holdfast; i++) {
    const next = elections[(i + 1) % 2]!.campaign({ value: String(i + 1) });
    while ((await server.admin.llen(elections[0]!.keys.queue)) === 0) await sleep(1);
    const started = performance.now();
    await term.resign();
    term = await next;
    times.push(performance.now() - started);
  }
  await term.resign();
  await Promise.all(clients.map((c) => c.close()));
  return times;
}

async function redisLeaderResign(server: RedisServer): Promise<number[]> {
  const leaders = [0, 1].map(() => new RedisLeader(counted(connect(server.port)), { key: 'resign', ttl: TERM_MS }));
  const times: number[] = [];
  leaders[0]!.elect();
  await once(leaders[0]!, 'elected');
  for (let i = 0; i < RESIGN_RUNS['redis-leader']; i++) {
    const [current, next] = [leaders[i % 2]!, leaders[(i + 1) % 2]!];
    next.elect();
    // Anywhere in the candidate's polling period, as a resignation falls in real use.
    await sleep(50 + Math.random() * 1_000);
    const elected = once(next, 'elected');
    const started = performance.now();
    current.stop();
    await elected;
    times.push(performance.now() - started);
  }
  for (const leader of leaders) {
    leader.stop();
  }
  await sleep(100);
  for (const leader of leaders) leader.redis.disconnect();
  return times;
}

async function holdfastCrash(server: RedisServer): Promise<number[]> {
  const past: number[] = [];
  for (let i = 0; i < CRASH_RUNS; i++) {
    const [crashing, next] = [0, 1].map(() => new LockClient(counted(connect(server.port)), { prefix: 'bench-el' }));
    const key = crashing!.election('crash').keys.lock;
    await crashing!.election('crash', { termMs: CRASH_TERM_MS }).campaign({ value: 'crashing' });
    const elected = next!.election('crash', { termMs: CRASH_TERM_MS }).campaign({ value: 'next' });
    await sleep(100 + Math.random() * 200);
    // The process dies: its term stays in Redis, nobody resigns it.
    await crashing!.close();
    const pttl = await server.admin.pttl(key);
    const crashedAt = performance.now();
    const term: Term = await elected;
    past.push(performance.now() - crashedAt - pttl);
    await term.resign();
    await next!.close();
  }
  return past;
}

async function redisLeaderCrash(server: RedisServer): Promise<number[]> {
  const past: number[] = [];
  for (let i = 0; i < CRASH_RUNS; i++) {
    const [crashing, next] = [0, 1].map(() => new RedisLeader(counted(connect(server.port)), { key: `crash${i}`, ttl: CRASH_TERM_MS }));
    crashing!.elect();
    await once(crashing!, 'elected');
    // The candidate's polling starts anywhere in the leader's renewal period.
    await sleep(Math.random() * 1_000);
    next!.elect();
    await sleep(100 + Math.random() * 200);
    clearInterval(crashing!.renewId);
    clearTimeout(crashing!.electId);
    crashing!.redis.disconnect();
    const pttl = await server.admin.pttl(leaderKey(`crash${i}`));
    const crashedAt = performance.now();
    await once(next!, 'elected');
    past.push(performance.now() - crashedAt - pttl);
    next!.stop();
    await sleep(50);
    next!.redis.disconnect();
  }
  return past;
}

async function holdfastIdle(server: RedisServer): Promise<number> {
  const clients = Array.from({ length: 1 + CANDIDATES + OBSERVERS }, () => new LockClient(counted(connect(server.port)), { prefix: 'bench-el' }));
  const elections = clients.map((c) => c.election('idle', { termMs: IDLE_TERM_MS }));
  const term = await elections[0]!.campaign({ value: 'leader' });
  const stop = new AbortController();
  setMaxListeners(CANDIDATES + OBSERVERS + 10, stop.signal);
  const campaigns = elections.slice(1, 1 + CANDIDATES).map((e, i) => e.campaign({ value: `c${i}`, signal: stop.signal }).catch(() => undefined));
  const observing = elections.slice(1 + CANDIDATES).map(async (e) => {
    for await (const _ of e.observe({ signal: stop.signal }));
  });
  while ((await server.admin.llen(elections[0]!.keys.queue)) < CANDIDATES) await sleep(20);
  await sleep(500);
  const before = snapshotClient();
  await sleep(IDLE_WINDOW_MS);
  const sent = diffCounts(before, snapshotClient()).total;
  stop.abort();
  await Promise.all([...campaigns, ...observing]);
  await term.resign();
  await Promise.all(clients.map((c) => c.close()));
  return sent / (IDLE_WINDOW_MS / 1000);
}

async function redisLeaderIdle(server: RedisServer): Promise<number> {
  const leaders = Array.from({ length: 1 + CANDIDATES }, () => new RedisLeader(counted(connect(server.port)), { key: 'idle', ttl: IDLE_TERM_MS }));
  leaders[0]!.elect();
  await once(leaders[0]!, 'elected');
  for (const leader of leaders.slice(1)) leader.elect();
  const observers = Array.from({ length: OBSERVERS }, () => counted(connect(server.port)));
  const timers = observers.map((o) => setInterval(() => void o.get(leaderKey('idle')).catch(() => undefined), 1_000));
  await sleep(1_500);
  const before = snapshotClient();
  await sleep(IDLE_WINDOW_MS);
  const sent = diffCounts(before, snapshotClient()).total;
  for (const timer of timers) clearInterval(timer);
  for (const leader of leaders) leader.stop();
  await sleep(100);
  for (const r of [...leaders.map((l) => l.redis), ...observers]) r.disconnect();
  return sent / (IDLE_WINDOW_MS / 1000);
}

const server = await RedisServer.start();
try {
  const rows: Record<string, Record<string, string>> = {};
  const raw: Record<string, unknown> = {};
  const resign = { holdfast: await holdfastResign(server), 'redis-leader': await redisLeaderResign(server) };
  const crash = { holdfast: await holdfastCrash(server), 'redis-leader': await redisLeaderCrash(server) };
  const idle = { holdfast: await holdfastIdle(server), 'redis-leader': await redisLeaderIdle(server) };
  for (const lib of ['holdfast', 'redis-leader'] as const) {
    rows[lib] = {
      'failover after resign p50': ms(percentile(resign[lib], 50)),
      'failover after resign p99': ms(percentile(resign[lib], 99)),
      'failover after a crash, past the term (median)': ms(percentile(crash[lib], 50)),
      'commands/s, 1 leader + 50 candidates + 50 observers': (Math.round(idle[lib] * 10) / 10).toString(),
    };
    raw[lib] = { resignMs: resign[lib], crashPastTermMs: crash[lib], idleCommandsPerSecond: idle[lib] };
  }
  const columns = Object.keys(rows.holdfast!);
  const table = [
    `| library | ${columns.join(' | ')} |`,
    `|---|${columns.map(() => '---').join('|')}|`,
    ...Object.entries(rows).map(([lib, row]) => `| ${lib} | ${columns.map((c) => row[c]).join(' | ')} |`),
  ].join('\n');
  const notes =
    `holdfast: term ${TERM_MS} ms (crash rows ${CRASH_TERM_MS} ms, idle rows ${IDLE_TERM_MS} ms), defaults otherwise; redis-leader@0.1.0: ttl the same, default wait 1000 ms; ` +
    `its observers GET the leader key once a second (it has no observer). Resign runs: holdfast ${RESIGN_RUNS.holdfast}, ` +
    `redis-leader ${RESIGN_RUNS['redis-leader']}; crash runs: ${CRASH_RUNS} each; idle window ${IDLE_WINDOW_MS} ms.`;
  console.log(`${table}\n\n${notes}`);
  const url = (file: string) => new URL(`../results/${file}`, import.meta.url);
  writeFileSync(url('election.md'), `# Leader election (one run, ${new Date().toISOString().slice(0, 10)})\n\n${table}\n\n${notes}\n`);
  writeFileSync(url('election.json'), `${JSON.stringify({ date: new Date().toISOString(), rows, raw }, null, 2)}\n`);
} finally {
  await server.stop();
}
// redis-leader's polling timers outlive stop() (a reply in flight schedules the next attempt).
process.exit(0);
