// A process of the inbox multi-process tests, on the built package. It posts `posts` messages
// `{ id: '<index>:<i>' }` to keys `k0..k<keys-1>` picked by a seeded generator, one post at a
// time, and handles the inbox's messages meanwhile. Every event is one JSON line on stdout:
//   { ev: 'p', key, id }            a post resolved (the message is stored)
//   { ev: 'e', key, ids, token }     a handler call ended
//   { ev: 'posted' }                 every post resolved
//   { ev: 'lost', key, pid }         this process lost a key's lease
// Each call also appends `{ ev: 's'|'e', ids, token, pid }` at its start and end to the list
// `<prefix>:log:<key>` in Redis: per key, the order in which calls really started and ended.
// With `holdAt: n`, the n-th handler call of the process reports `{ ev: 'held', key, token }`
// and waits for a `go` line on stdin before it goes on (the tests kill or freeze it there).
// A `stop` line on stdin closes the inbox and the client, then the process exits 0.
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { LockClient } from '../../dist/index.js';

const { redisUrl, prefix, name, index, posts, keys, leaseMs, seed, holdAt } = JSON.parse(process.argv[2] ?? '{}');
const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
const locks = new LockClient(redis, { prefix });
locks.on('error', () => undefined); // a frozen or cut-off process's renewals fail: expected here

let go;
const released = new Promise((resolve) => (go = resolve));
let calls = 0;
const report = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

// mulberry32: the same keys for the same seed, run after run.
let state = seed >>> 0;
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

const inbox = locks.inbox(name, {
  leaseMs,
  concurrency: 16,
  recoverIntervalMs: 100,
  handler: async (key, messages, { token }) => {
    const ids = messages.map((m) => m.id);
    const log = `${prefix}:log:${key}`;
    await redis.rpush(log, JSON.stringify({ ev: 's', ids, token, pid: process.pid }));
    if (++calls === holdAt) {
      report({ ev: 'held', key, token, pid: process.pid });
      await released;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 3)));
    await redis.rpush(log, JSON.stringify({ ev: 'e', ids, token, pid: process.pid }));
    report({ ev: 'e', key, ids, token, pid: process.pid });
  },
});
inbox.on('dead', (event) => report({ ev: 'dead', key: event.key, reason: event.reason }));
// A lease that ran out under the process (a loaded machine, a freeze): its finished calls may be redelivered.
inbox.on('lost', (event) => report({ ev: 'lost', key: event.key, pid: process.pid }));
inbox.start();

createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line === 'go') go();
  if (line !== 'stop') return;
  await inbox.close();
  await locks.close();
  redis.disconnect();
  process.exit(0);
});

report({ ev: 'ready', pid: process.pid });
for (let i = 0; i < posts; i++) {
  const key = `k${Math.floor(random() * keys)}`;
  const id = `${index}:${i}`;
  for (;;) {
    try {
      await inbox.post(key, { id });
      break;
    } catch (error) {
      // A post cut off (a connection dropped, Redis restarting) is sent again: at-least-once posting.
      report({ ev: 'retry', key, id, code: error.code });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  report({ ev: 'p', key, id });
}
report({ ev: 'posted' });
