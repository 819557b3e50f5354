/**
 * The per-key inbox against BullMQ with a queue and a worker per key (the free way to get "one job at a time
 * per key" from BullMQ; its per-group ordering is in the paid Pro), on one redis-server the bench starts
 * (`pnpm --filter @holdfast/bench run bench:inbox`, about a minute). - one key: 2,000 messages posted at once
 * to one key, handled one at a time in order: messages per second until the last is handled; - 100 keys: 20
 * messages to each of 100 keys (2,000), handled one at a time per key, up to 100 keys at once in the process:
 * messages per second; - hand-off: a message posted to an idle key, until its handler starts (p50, p99 of 200
 * in a row), the queue's worker (or the inbox) already running in the process.
 */
import { writeFileSync } from 'node:fs';
import { LockClient } from '@holdfast/core';
import { Queue, Worker } from 'bullmq';
import { diffCounts, snapshotServer } from './command-counter.js';
import { RedisServer, connect } from './processes.js';
import { median } from './stats.js';

const MESSAGES = 2_000;
const KEYS = 100;
const HANDOFFS = 200;
const ROUNDS = 3;

interface Figures {
  readonly perSecond: number;
  readonly commandsPerMessage: number;
  readonly cpuUsPerMessage: number;
}
interface Contender {
  readonly name: string;
  /** Posts `perKey` messages to each of `keys`; resolves when every one was handled. */
  flood(keys: readonly string[], perKey: number): Promise<void>;
  /** One message to an idle key; resolves with ms from the post to the handler's start. */
  handoff(key: string): Promise<number>;
  close(): Promise<void>;
}

const quantile = (values: readonly number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;

/** Resolves each key's promise when the handler has seen `count` messages of that key. */
function counters() {
  const waiting = new Map<string, { left: number; done: () => void }>();
  return {
    expect(key: string, count: number): Promise<void> {
      return new Promise((done) => waiting.set(key, { left: count, done }));
    },
    seen(key: string): void {
      const entry = waiting.get(key);
      if (entry && --entry.left === 0) {
        waiting.delete(key);
        entry.done();
      }
    },
  };
}

function holdfast(port: number): Contender {
  const redis = connect(port);
  const locks = new LockClient(redis, { prefix: 'bench-inbox' });
  const seen = counters();
  let started: ((at: number) => void) | undefined;
  const inbox = locks.inbox<{ n: number }>('bench', {
    mode: 'each',
    concurrency: KEYS,
    handler: async (key) => {
      started?.(performance.now());
      seen.seen(key);
    },
  });
  return {
    name: 'holdfast inbox',
    async flood(keys, perKey) {
      const done = Promise.all(keys.map((key) => seen.expect(key, perKey)));
      const posts: Promise<unknown>[] = [];
      for (let n = 0; n < perKey; n++) for (const key of keys) posts.push(inbox.post(key, { n }));
      await Promise.all(posts);
      await done;
    },
    async handoff(key) {
      const start = new Promise<number>((resolve) => (started = resolve));
      const sent = performance.now();
      await inbox.post(key, { n: 0 });
      const at = await start;
      started = undefined;
      await inbox.drain(key, { waitMs: 10_000 });
      return at - sent;
    },
    async close() {
      await locks.close();
      redis.disconnect();
    },
  };
}

function bullmq(port: number): Contender {
  const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
  const queues = new Map<string, { queue: Queue; worker: Worker }>();
  const seen = counters();
  let started: ((at: number) => void) | undefined;
  const queueOf = async (key: string) => {
    let entry = queues.get(key);
    if (!entry) {
      const queue = new Queue(`inbox-${key}`, { connection, prefix: 'bench-bull' });
      // One worker of concurrency 1 per key: one job at a time per key, in order.
      const worker = new Worker(
        `inbox-${key}`,
        async () => {
          started?.(performance.now());
          seen.seen(key);
        },
        { connection, prefix: 'bench-bull', concurrency: 1 },
      );
      await worker.waitUntilReady();
      entry = { queue, worker };
      queues.set(key, entry);
    }
    return entry.queue;
  };
  return {
    name: 'BullMQ, a queue and a worker per key',
    async flood(keys, perKey) {
      const qs = await Promise.all(keys.map(queueOf));
      const done = Promise.all(keys.map((key) => seen.expect(key, perKey)));
      const adds: Promise<unknown>[] = [];
      for (let n = 0; n < perKey; n++) for (const q of qs) adds.push(q.add('message', { n }, { removeOnComplete: true }));
      await Promise.all(adds);
      await done;
    },
    async handoff(key) {
      const queue = await queueOf(key);
      const start = new Promise<number>((resolve) => (started = resolve));
      const sent = performance.now();
      await queue.add('message', { n: 0 }, { removeOnComplete: true });
      const at = await start;
      started = undefined;
      return at - sent;
    },
    async close() {
      for (const { queue, worker } of queues.values()) {
        await worker.close();
        await queue.close();
      }
    },
  };
}

async function measure(server: RedisServer, run: () => Promise<void>, messages: number): Promise<Figures> {
  const before = await snapshotServer([server.admin]);
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  const spent = diffCounts(before, await snapshotServer([server.admin]));
  return { perSecond: messages / seconds, commandsPerMessage: spent.total / messages, cpuUsPerMessage: (spent.usec ?? 0) / messages };
}

const server = await RedisServer.start();
const rows: { name: string; oneKey: Figures; manyKeys: Figures; p50: number; p99: number }[] = [];
try {
  for (const make of [holdfast, bullmq]) {
    const contender = make(server.port);
    const manyKeys = Array.from({ length: KEYS }, (_, i) => `thread-${i}`);
    // Warm-up: connections, scripts, workers.
    await contender.flood(manyKeys, 2);
    const one: Figures[] = [];
    const many: Figures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      one.push(await measure(server, () => contender.flood([`single-${round}`], MESSAGES), MESSAGES));
      many.push(await measure(server, () => contender.flood(manyKeys, MESSAGES / KEYS), MESSAGES));
    }
    const latencies: number[] = [];
    for (let i = 0; i < HANDOFFS; i++) latencies.push(await contender.handoff('idle'));
    const pick = (figures: Figures[]): Figures => ({
      perSecond: median(figures.map((f) => f.perSecond)),
      commandsPerMessage: median(figures.map((f) => f.commandsPerMessage)),
      cpuUsPerMessage: median(figures.map((f) => f.cpuUsPerMessage)),
    });
    rows.push({ name: contender.name, oneKey: pick(one), manyKeys: pick(many), p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) });
    await contender.close();
  }
} finally {
  await server.stop();
}

const fmt = (f: Figures) => `${Math.round(f.perSecond).toLocaleString('en-US')}/s, ${f.commandsPerMessage.toFixed(1)} cmds, ${f.cpuUsPerMessage.toFixed(0)} µs`;
const table = [
  '| | one key: messages/s, commands and Redis CPU per message | 100 keys: the same | hand-off post → handler p50 / p99 |',
  '|---|---|---|---|',
  ...rows.map((r) => `| ${r.name} | ${fmt(r.oneKey)} | ${fmt(r.manyKeys)} | ${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} ms |`),
].join('\n');
const [ours, theirs] = rows;
const ratios =
  ours && theirs
    ? `Ratios holdfast / BullMQ: one key ${(ours.oneKey.perSecond / theirs.oneKey.perSecond).toFixed(2)}× the messages per second, ` +
      `100 keys ${(ours.manyKeys.perSecond / theirs.manyKeys.perSecond).toFixed(2)}×, hand-off p50 ${(ours.p50 / theirs.p50).toFixed(2)}× the latency.`
    : '';
const notes =
  `${MESSAGES} messages per round, median of ${ROUNDS} rounds after a warm-up; one process, one redis-server on loopback; ` +
  `handlers that return at once (the cost is the queue's). Hand-off: ${HANDOFFS} posts in a row to an idle key.`;
console.log(`${table}\n\n${ratios}\n\n${notes}`);
const url = (file: string) => new URL(`../results/${file}`, import.meta.url);
writeFileSync(url('inbox.md'), `# Per-key inbox vs BullMQ (one run, ${new Date().toISOString().slice(0, 10)})\n\n${table}\n\n${ratios}\n\n${notes}\n`);
writeFileSync(url('inbox.json'), `${JSON.stringify({ date: new Date().toISOString(), rows }, null, 2)}\n`);
