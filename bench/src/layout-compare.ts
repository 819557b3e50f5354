import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import type { Locker } from './library-types.js';
import { connect, RedisServer, setConnectOptions } from './processes.js';
import { SATURATION_LOOPS } from './scenario-saturation.js';
import { runUncontended } from './scenario-uncontended.js';
import { median, spreadPct } from './stats.js';

/**
 * Two builds of `@holdfast/core` side by side in one process: the uncontended p50 of a mutex acquire +
 * release (scenario 1's measurement, the two builds taking turns in blocks) and what one second of Redis CPU
 * buys (the saturation scenario's figure, on one auto-pipelined connection with its 32 loops, in this
 * process).
 */

const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: {
    base: { type: 'string', default: 'main' },
    head: { type: 'string', default: '.' },
    rounds: { type: 'string', default: '3' },
    cycles: { type: 'string', default: '4000' },
    'window-ms': { type: 'string', default: '2000' },
  },
});
const rounds = Number(values.rounds);
const root = fileURLToPath(new URL('../../', import.meta.url));
const out = fileURLToPath(new URL('../results/tmp/layout/', import.meta.url));

interface Build {
  readonly id: string;
  readonly LockClient: new (redis: Redis, options: { prefix: string }) => {
    lock(name: string): { acquire(): Promise<{ release(): Promise<unknown> }> };
    on(event: 'error', listener: () => void): unknown;
    close(): Promise<void>;
  };
}

/** Bundles core's sources at `rev` ('.': the work tree) into one ES module; the Redis clients stay external. */
async function build(rev: string): Promise<Build> {
  const dir = `${out}${rev === '.' ? 'worktree' : rev}/`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const sources = rev === '.' ? `${root}packages/core/src` : `${dir}packages/core/src`;
  if (rev !== '.') execFileSync('sh', ['-c', `git -C "${root}" archive ${rev} packages/core/src | tar -x -C "${dir}"`]);
  // esbuild comes with tsx, a dependency of the bench.
  const esbuild = createRequire(import.meta.resolve('tsx'))('esbuild') as { build(options: Record<string, unknown>): Promise<unknown> };
  await esbuild.build({
    entryPoints: [`${sources}/index.ts`],
    outfile: `${dir}core.mjs`,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    loader: { '.lua': 'text' },
    external: ['ioredis', 'redis', 'iovalkey'],
    nodePaths: [`${root}packages/core/node_modules`],
    logLevel: 'warning',
  });
  const mod = (await import(pathToFileURL(`${dir}core.mjs`).href)) as { LockClient: Build['LockClient'] };
  return { id: rev === '.' ? 'worktree' : rev, LockClient: mod.LockClient };
}

function opener(b: Build, port: number): () => Promise<Locker> {
  return async () => {
    const redis = connect(port);
    const client = new b.LockClient(redis, { prefix: 'bench' });
    client.on('error', () => undefined);
    const locks = new Map<string, ReturnType<typeof client.lock>>();
    return {
      async acquire(name) {
        let lock = locks.get(name);
        if (!lock) locks.set(name, (lock = client.lock(name)));
        const lease = await lock.acquire();
        return async () => void (await lease.release());
      },
      async close() {
        await client.close();
        redis.disconnect();
      },
    };
  };
}

/** Cycles per second of Redis CPU: SATURATION_LOOPS loops on one auto-pipelined connection to a fresh server. */
async function saturation(b: Build, windowMs: number): Promise<number> {
  const server = await RedisServer.start();
  try {
    const locker = await opener(b, server.port)();
    let cycles = 0;
    let stopped = false;
    const loops = Array.from({ length: SATURATION_LOOPS }, async (_, l) => {
      while (!stopped) {
        const release = await locker.acquire(`sat:${l}`);
        await release();
        cycles++;
      }
    });
    const cpu = async () => {
      const text = await server.admin.info('cpu');
      const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1]);
      return field('used_cpu_user') + field('used_cpu_sys');
    };
    await new Promise((resolve) => setTimeout(resolve, 500));
    const [cpu0, cycles0] = [await cpu(), cycles];
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const [cpu1, cycles1] = [await cpu(), cycles];
    stopped = true;
    await Promise.all(loops);
    await locker.close();
    return (cycles1 - cycles0) / (cpu1 - cpu0);
  } finally {
    await server.stop();
  }
}

const builds = [await build(values.base), await build(values.head)];
const log = (line: string) => console.log(line);
const server = await RedisServer.start();
let uncontended;
try {
  uncontended = await runUncontended(
    builds.map((b) => ({ id: b.id, label: b.id, settings: 'lock(name).acquire(), then release', open: opener(b, server.port) })),
    [server.admin],
    { warmup: 1000, cycles: Number(values.cycles), rounds, floorId: builds[0]!.id, log },
  );
} finally {
  await server.stop();
}
setConnectOptions({ enableAutoPipelining: true });
const perCpu = builds.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  for (let k = 0; k < builds.length; k++) {
    const i = (k + r) % builds.length;
    perCpu[i]!.push(await saturation(builds[i]!, Number(values['window-ms'])));
    log(`  saturation round ${r + 1} ${builds[i]!.id}: ${Math.round(perCpu[i]!.at(-1)!)} cycles per Redis CPU s`);
  }
}
console.log('\nbuild | uncontended p50 µs (round spread) | cycles per Redis CPU s (round spread)');
builds.forEach((b, i) => {
  const u = uncontended[i]!;
  console.log(`${b.id} | ${u.p50Us.toFixed(0)} (${u.spreadPct.toFixed(0)} %) | ${Math.round(median(perCpu[i]!))} (${spreadPct(perCpu[i]!).toFixed(0)} %)`);
});
const [a, z] = [uncontended[0]!, uncontended[1]!];
console.log(`${builds[1]!.id} over ${builds[0]!.id}: p50 ×${(z.p50Us / a.p50Us).toFixed(3)}, cycles per Redis CPU s ×${(median(perCpu[1]!) / median(perCpu[0]!)).toFixed(3)}`);
