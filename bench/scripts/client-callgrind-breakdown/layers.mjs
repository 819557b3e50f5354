// One layer of holdfast's client path, as a complete uncontended cycle on one ioredis client:
//   node layers.mjs <layer> <warmup> <cycles>       (run under callgrind by layers.sh)
// raw: take.lua + release-taken.lua through ioredis directly, holdfast's arguments;
// runScript: the same through core's runScript (NOSCRIPT recovery); callRedis: through callRedis
// as well (timeout, retries, typed errors; the policy a LockClient uses has a timeout queue:
// set QUEUE=1); lockclient: a whole LockClient cycle (lock.acquire() + lease.release());
// semaphore: redis-semaphore's Mutex, for reference; redlock: a holdfast Redlock cycle over the
// instances at PORTS (comma-separated, started beforehand), redlock5: redlock@5 over the same
// (REDLOCK=<dir of a @holdfast/redlock dist> picks that build). CORE=<dir of a core dist> picks the build
// (default: this checkout's packages/core/dist). PORT (default 6379) is the Redis to use. MARK=1
// writes '=== window' and '=== end' around the measured cycles (to fd 1 directly: a stream
// write would itself deoptimize node's stream code), to read `--trace-opt
// --trace-deopt` output by: what V8 compiled or deoptimized inside the window.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const bench = fileURLToPath(new URL('../../package.json', import.meta.url));
const req = createRequire(bench);
const Redis = req('ioredis');
const CORE = process.env.CORE ?? fileURLToPath(new URL('../../../packages/core/dist', import.meta.url));
const I = await import(`${CORE}/internal.js`);
const { LockClient } = await import(`${CORE}/index.js`);
const [layer, warmup, cycles] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const redis = new Redis(Number(process.env.PORT ?? 6379), '127.0.0.1');
await new Promise((resolve) => redis.once('ready', resolve));
const port = I.portOf(redis);
const take = I.takeWithLease(30_000);
const release = I.scripts.releaseTaken;
await redis.script('LOAD', take.source);
await redis.script('LOAD', release.source);
const tag = `${process.pid}`;
const keys = [`layers:{${tag}}:l`, `layers:{${tag}}:q`, `layers:{${tag}}:f`];
const policy = { commandTimeoutMs: 5_000, retries: 2, ...(process.env.QUEUE ? { timeouts: new I.TimeoutQueue(5_000) } : {}) };
// The string lock but its token, shaped as holdfast's (a 16-character owner, a 12-character request id).
const prefix = () => `${I.randomId(12)}@${I.randomId()}|`;
const client = new LockClient(redis, { prefix: `layers${tag}` });
client.on('error', () => undefined);
const lock = client.lock('k');
const { Mutex } = req('redis-semaphore');
const multi = (process.env.PORTS ?? '').split(',').filter(Boolean).map(Number);
const instances = await Promise.all(
  multi.map(async (p) => {
    const r = new Redis(p, '127.0.0.1');
    await new Promise((resolve) => r.once('ready', resolve));
    return r;
  }),
);
const REDLOCK = process.env.REDLOCK ?? fileURLToPath(new URL('../../../packages/redlock/dist', import.meta.url));
const redlock =
  multi.length > 0 && layer === 'redlock'
    ? new (await import(`${REDLOCK}/index.js`)).Redlock(instances, {
        prefix: `layers${tag}`,
        // Under callgrind a round takes ~50 times as long: the default 50 ms would time instances out.
        instanceTimeoutMs: 1_000,
      })
    : undefined;
redlock?.on('error', () => undefined);
const Redlock5 = req('redlock').default;
const redlock5 = multi.length > 0 && layer === 'redlock5' ? new Redlock5(instances) : undefined;
redlock5?.on('error', () => undefined);
const layers = {
  raw: async () => {
    const id = prefix();
    const token = await redis.evalsha(take.sha, 3, keys, [id]);
    await redis.evalsha(release.sha, 1, keys[0], id + token);
  },
  runScript: async () => {
    const id = prefix();
    const token = await I.runScript(port, take, keys, [id]);
    await I.runScript(port, release, [keys[0]], [id + token]);
  },
  callRedis: async () => {
    const id = prefix();
    const token = await I.callRedis(() => I.runScript(port, take, keys, [id]), policy);
    await I.callRedis(() => I.runScript(port, release, [keys[0]], [id + token]), policy);
  },
  lockclient: async () => {
    const lease = await lock.acquire();
    await lease.release();
  },
  semaphore: async () => {
    const mutex = new Mutex(redis, `layers-sem-${tag}`, { onLockLost: () => undefined });
    await mutex.acquire();
    await mutex.release();
  },
  redlock: async () => {
    const lease = await redlock.lock('k').acquire();
    await lease.release();
  },
  redlock5: async () => {
    const lock = await redlock5.acquire([`layers-rl5-${tag}`], 30_000);
    await lock.release();
  },
};
const cycle = layers[layer];
if (!cycle) throw new Error(`unknown layer ${layer}: one of ${Object.keys(layers).join(', ')}`);
// One loop function for both, optimized during the warm-up (as client-callgrind-child.mjs):
// a second loop at the top level was compiled inside the measured window in some runs.
async function repeat(n) {
  for (let i = 0; i < n; i++) await cycle();
}
await repeat(warmup);
// WINDOWS=k measures k windows of `cycles` one after another, each between two marker writes
// (windows.sh dumps callgrind's counters at each: every window is counted on its own).
const windows = Number(process.env.WINDOWS ?? 1);
for (let w = 0; w < windows; w++) {
  if (process.env.MARK) writeSync(1, '=== window\n');
  await repeat(cycles);
}
if (process.env.MARK) writeSync(1, '=== end\n');
// As bench:client-callgrind: a full GC closes both runs, so a major collection is counted in both or neither.
globalThis.gc?.();
if ((await redis.exists(keys[0])) !== 0) throw new Error(`${layer}: the lock was left held`);
await client.close();
await redlock?.close();
redis.disconnect();
for (const r of instances) r.disconnect();
