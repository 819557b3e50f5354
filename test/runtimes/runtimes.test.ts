import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startRedis, startRedisServers, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The consumer scenarios (scenarios.mjs, scenarios.cjs) on every tested runtime: Node, and Bun
 * and Deno as the root devDependencies `bun` and `deno` install them (binaries shipped inside npm
 * packages), all three over the same install of the packed packages. The README's runtime table
 * names the versions; this file checks that it names the ones installed.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const bin = (name: string) => join(root, 'node_modules/.bin', name);
const rootPackage = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };

const runtimes = [
  { name: 'node', command: process.execPath, args: [] as string[] },
  { name: 'bun', command: bin('bun'), args: ['run'] },
  // Deno resolves the packages from the folder's node_modules (package.json present); -A: the
  // scenarios read the environment and open sockets.
  { name: 'deno', command: bin('deno'), args: ['run', '-A'] },
] as const;

/** What every runtime must print: the outcome Node gives. */
const expected = {
  reentry: { afterAwait: 2, timeout: 2, immediate: 2, microtask: 2, then: 2, nested: 3 },
  afterSection: 1,
  thenables: { chain: 2, returned: 2, returnAwait: 2 },
  siblingsMaxInside: 1,
  handoff: { timedOut: true, before: false, higherToken: true },
  watchdog: { leaseMs: 10_000, held: true },
  lost: { reason: 'expired', aborted: true, beforeExpiry: true },
  redlock: 2,
  nodeRedis: 2,
};

/** What Bun prints for the scenarios over its own `RedisClient` (bun-client.mjs). */
const expectedBunClient = {
  basic: { holdCount: 1, otherGot: false, freeAfterRelease: true },
  reentry: 2,
  userClientOpen: { connected: true, ping: 'PONG' },
  handoff: { higherToken: true, holdCount: 1 },
  semaphore: { thirdRefusedWhileFull: true, thirdGotReleasedPermit: true },
  scriptFlush: { reacquired: true },
  subscriberKilled: { killed: true, woken: true },
  stopped: { error: { name: 'RedisTimeoutError', code: 'ERR_REDIS_TIMEOUT' }, afterResume: 1 },
  clusterRefused: { name: 'InvalidArgumentError', code: 'ERR_INVALID_ARGUMENT', namesTheGap: true },
};

let work: string;
let app: string;
let servers: RedisServer[] = [];
/** For bun-client.mjs: a server it stops and resumes, and a Cluster-enabled one it must be refused. */
let stoppable: RedisServer;
let clusterNode: RedisServer;

describe('runtimes', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-runtimes-'));
    app = join(work, 'app');
    await mkdir(app);
    servers = await startRedisServers(3);
    stoppable = await startRedis();
    clusterNode = await startRedis({ args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'] });
    const tarballs = join(work, 'tarballs');
    // One at a time: concurrent `pnpm pack` runs of one workspace step on each other's files.
    const packed: string[] = [];
    for (const dir of ['core', 'watchdog', 'redlock']) {
      const { stdout } = await run('pnpm', ['pack', '--pack-destination', tarballs], { cwd: join(root, 'packages', dir) });
      packed.push(stdout.trim().split('\n').pop()!);
    }
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'runtimes-app', private: true }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packed, 'ioredis', 'redis'], { cwd: app });
    for (const file of ['scenarios.mjs', 'scenarios.cjs', 'bun-client.mjs']) {
      await writeFile(join(app, file), await readFile(join(import.meta.dirname, file), 'utf8'));
    }
  }, 180_000);
  afterAll(async () => {
    await Promise.all([...servers, stoppable, clusterNode].filter(Boolean).map((server) => server.stop()));
    if (work) await rm(work, { recursive: true, force: true });
  });

  // DENO_NO_UPDATE_CHECK: the run needs nothing from the network.
  const env = (label: string) => ({
    ...process.env,
    REDIS_URLS: servers.map((s) => s.url).join(','),
    RUNTIME_LABEL: label,
    DENO_NO_UPDATE_CHECK: '1',
    BUN_STOP_URL: stoppable.url,
    BUN_STOP_PID: String(stoppable.pid),
    BUN_CLUSTER_URL: clusterNode.url,
  });

  it('installs the Bun and Deno versions the root package.json pins and the README names', async () => {
    const readme = await readFile(join(root, 'README.md'), 'utf8');
    const bun = (await run(bin('bun'), ['--version'])).stdout.trim();
    const deno = /^deno (\S+)/.exec((await run(bin('deno'), ['--version'])).stdout)![1];
    expect(bun).toBe(rootPackage.devDependencies.bun);
    expect(deno).toBe(rootPackage.devDependencies.deno);
    expect(readme).toContain(`| Bun ${bun} |`);
    expect(readme).toContain(`| Deno ${deno} |`);
  });

  for (const runtime of runtimes) {
    it(`${runtime.name}: the ESM scenarios`, async () => {
      const { stdout } = await run(runtime.command, [...runtime.args, 'scenarios.mjs'], { cwd: app, env: env(runtime.name) });
      expect(JSON.parse(stdout)).toEqual(expected);
    }, 60_000);

    it(`${runtime.name}: CommonJS require`, async () => {
      const { stdout } = await run(runtime.command, [...runtime.args, 'scenarios.cjs'], { cwd: app, env: env(`${runtime.name}-cjs`) });
      expect(JSON.parse(stdout)).toEqual({ n: 2, redlock: 'function' });
    }, 60_000);
  }

  // Bun's own client: lock, re-entry, hand-off over classic pub/sub, a semaphore, SCRIPT FLUSH,
  // the subscriber's connection killed, a stopped server, and a Cluster refused.
  it("bun: the scenarios over Bun's RedisClient", async () => {
    try {
      const { stdout } = await run(bin('bun'), ['run', 'bun-client.mjs'], { cwd: app, env: env('bun-client') });
      expect(JSON.parse(stdout)).toEqual(expectedBunClient);
    } finally {
      // The scenario resumes the server it stopped; again here, should it have died meanwhile.
      stoppable.resume();
    }
  }, 90_000);
});
