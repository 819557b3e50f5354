import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { bothApp, bothTypes, coreApp, coreTypes, redlockApp, redlockTypes, watchdogApp, watchdogTypes, type Imp } from './node-redis-apps.js';

/**
 * The packed packages as a node-redis user gets them: installed into an empty folder
 * with `redis` and no ioredis (npm must not bring it in: it is an optional peer), then
 * used from ESM, from CommonJS (with and without require(esm)) and from TypeScript
 * against real servers; once with node-redis 6 (what `npm install redis` gives) for
 * every package, once with node-redis 5, and once with both clients installed.
 * Registered by consumer.test.ts, which packs the packages and starts the servers.
 */

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

export interface ConsumerContext {
  /** The test's scratch folder. */
  work(): string;
  /** The package in `dir`, packed once (one call at a time). */
  pack(dir: string): Promise<string>;
  /** Three servers' URLs. */
  urls(): string[];
  /** Runs Jest (installed once, apart) over the tests of an app; resolves with its report or why it failed. */
  runJest(app: string, env: NodeJS.ProcessEnv): Promise<string>;
}

interface App {
  readonly name: string;
  /** Workspace folders to pack and install, the package under test first. */
  readonly dirs: readonly string[];
  /** What else `npm install` gets. */
  readonly clients: readonly string[];
  readonly program: (imp: Imp) => string;
  readonly types: string;
  readonly expected: unknown;
}

const CORE_EXPECTED = { n: 2, typed: true, handedOff: true, open: true };

const APPS: readonly App[] = [
  { name: '@holdfast/core', dirs: ['packages/core'], clients: ['redis'], program: coreApp, types: coreTypes, expected: CORE_EXPECTED },
  {
    name: '@holdfast/watchdog',
    dirs: ['packages/watchdog', 'packages/core'],
    clients: ['redis'],
    program: watchdogApp,
    types: watchdogTypes,
    expected: { renewed: true, leaseMs: 10000 },
  },
  {
    name: '@holdfast/redlock',
    dirs: ['packages/redlock', 'packages/core'],
    clients: ['redis'],
    program: redlockApp,
    types: redlockTypes,
    expected: { n: 2, typed: true },
  },
  { name: '@holdfast/core with node-redis 5', dirs: ['packages/core'], clients: ['redis@5'], program: coreApp, types: coreTypes, expected: CORE_EXPECTED },
  {
    name: '@holdfast/core, watchdog and redlock with both ioredis and redis',
    dirs: ['packages/core', 'packages/watchdog', 'packages/redlock'],
    clients: ['redis', 'ioredis'],
    program: bothApp,
    types: bothTypes,
    expected: { handedOff: true, n: 2 },
  },
];

/** Every `ioredis` folder anywhere under node_modules (none may be there without ioredis asked for). */
async function ioredisCopies(app: string): Promise<string[]> {
  const { stdout } = await run('find', [join(app, 'node_modules'), '-type', 'd', '-name', 'ioredis']);
  return stdout.split('\n').filter(Boolean);
}

async function packageJson(app: string, name: string): Promise<{ version: string; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }> }> {
  return JSON.parse(await readFile(join(app, 'node_modules', name, 'package.json'), 'utf8'));
}

export function nodeRedisConsumerTests(ctx: ConsumerContext): void {
  for (const [i, a] of APPS.entries()) {
    it(`${a.name}: installed with ${a.clients.join(' and ')}, used from import, require and TypeScript`, async () => {
      const app = join(ctx.work(), `node-redis-app-${i}`);
      await mkdir(app, { recursive: true });
      await writeFile(join(app, 'package.json'), JSON.stringify({ name: `node-redis-app-${i}`, private: true }));
      const tarballs: string[] = [];
      for (const dir of a.dirs) tarballs.push(await ctx.pack(dir));
      await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, ...a.clients, '@types/node@20'], { cwd: app });

      // The installed node-redis is in the range every package declares, as an optional peer.
      const redis = await packageJson(app, 'redis');
      for (const dir of a.dirs) {
        const declared = await packageJson(app, JSON.parse(await readFile(join(root, dir, 'package.json'), 'utf8')).name);
        const majors = (declared.peerDependencies?.redis ?? '').split('||').map((range) => /^\^(\d+)\./.exec(range.trim())?.[1]);
        expect(majors).toContain(redis.version.split('.')[0]);
        expect(declared.peerDependenciesMeta?.redis?.optional).toBe(true);
        expect(declared.peerDependenciesMeta?.ioredis?.optional).toBe(true);
      }
      if (a.clients.includes('redis@5')) expect(redis.version.split('.')[0]).toBe('5');
      const copies = await ioredisCopies(app);
      expect(copies).toEqual(a.clients.includes('ioredis') ? [join(app, 'node_modules/ioredis')] : []);
      if (!a.clients.includes('ioredis')) expect(existsSync(join(app, 'node_modules/ioredis'))).toBe(false);

      await writeFile(join(app, 'esm.mjs'), a.program('import'));
      await writeFile(join(app, 'cjs.cjs'), a.program('require'));
      await writeFile(join(app, 'check.ts'), a.types);
      await writeFile(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], lib: ['ES2022', 'ESNext.Disposable', 'DOM'] },
          files: ['check.ts'],
        }),
      );
      const env = { ...process.env, REDIS_URL: ctx.urls()[0], REDIS_URLS: ctx.urls().join(',') };
      const outputs = {
        esm: (await run('node', ['esm.mjs'], { cwd: app, env })).stdout,
        cjs: (await run('node', ['cjs.cjs'], { cwd: app, env })).stdout,
        // A CommonJS loader without require(esm) (Jest, older Node) must load node-redis's side too.
        cjsOnly: (await run('node', ['--no-experimental-require-module', 'cjs.cjs'], { cwd: app, env })).stdout,
      };
      expect(JSON.parse(outputs.esm)).toEqual(a.expected);
      expect(JSON.parse(outputs.cjs)).toEqual(a.expected);
      expect(JSON.parse(outputs.cjsOnly)).toEqual(a.expected);
      const typecheck = await run('node', [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
        (error: { stdout?: string }) => ({ stdout: `tsc failed:\n${error.stdout ?? String(error)}` }),
      );
      expect(typecheck.stdout).toBe('');
    }, 240_000);
  }

  // Jest runs tests as CommonJS through its own module loader, which has no require(esm): the
  // packed core with only `redis` beside it must load and lock there (the ioredis twin of this
  // is consumer.test.ts's Jest test).
  it('@holdfast/core with redis and no ioredis: locks under Jest (CommonJS, no require(esm))', async () => {
    const app = join(ctx.work(), 'jest-node-redis-app');
    await mkdir(app, { recursive: true });
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'jest-node-redis-app', private: true }));
    const tarball = await ctx.pack('packages/core');
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, 'redis'], { cwd: app });
    expect(await ioredisCopies(app)).toEqual([]);
    await writeFile(
      join(app, 'locks.test.js'),
      `const { createClient } = require('redis');
const { LockClient, LockTimeoutError } = require('@holdfast/core');
test('a lock is taken through node-redis, re-entered, refused to a rival and handed on', async () => {
  const redis = await createClient({ url: process.env.REDIS_URL }).connect();
  const locks = new LockClient(redis, { prefix: 'jest-node-redis' });
  const rival = new LockClient(redis, { prefix: 'jest-node-redis' });
  const n = await locks.lock('j').withLock(() => locks.lock('j').withLock((l) => l.holdCount));
  const first = await locks.lock('j').acquire();
  const refused = await rival.lock('j').acquire({ waitMs: 50 }).catch((e) => e);
  const waiting = rival.lock('j').acquire({ waitMs: 30000 });
  await first.release();
  const second = await waiting;
  await second.release();
  await Promise.all([locks.close(), rival.close()]);
  const open = (await redis.ping()) === 'PONG';
  redis.destroy();
  expect({ n, refused: refused instanceof LockTimeoutError, higher: second.token > first.token, open }).toEqual({
    n: 2,
    refused: true,
    higher: true,
    open: true,
  });
}, 60000); // Jest's 5 s default is a speed limit on a busy machine
`,
    );
    expect(await ctx.runJest(app, { ...process.env, REDIS_URL: ctx.urls()[0] })).toMatch(/Tests:\s+1 passed, 1 total/);
  }, 240_000);
}
