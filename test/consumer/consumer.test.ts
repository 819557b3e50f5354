import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startRedisServers, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nestConsumerTests } from './nestjs-consumers.js';
import { nodeRedisConsumerTests } from './node-redis-consumers.js';

/**
 * Each public package as npm users get it: packed with `pnpm pack`, installed
 * alone (with its declared dependencies and the ioredis `npm install ioredis`
 * gives, 6.x today) into an empty folder, then used from ESM, from CommonJS
 * and from TypeScript against a real Redis.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

interface Consumer {
  readonly pkg: string;
  readonly dir: string;
  /** Packages packed alongside (its workspace dependencies). */
  readonly with: readonly string[];
  readonly esm: string;
  readonly cjs: string;
  readonly ts: string;
}

const core = (imp: 'import' | 'require') => `
${imp === 'import' ? "import { Redis } from 'ioredis';\nimport { LockClient, isHoldfastError } from '@holdfast/core';\nimport * as keys from '@holdfast/core/keys';" : "const { Redis } = require('ioredis');\nconst { LockClient, isHoldfastError } = require('@holdfast/core');\nconst keys = require('@holdfast/core/keys');"}
const main = async () => {
  const redis = new Redis(process.env.REDIS_URL);
  const locks = new LockClient(redis, { prefix: 'consumer' });
  const n = await locks.lock('c').withLock(async () => locks.lock('c').withLock((l) => l.holdCount));
  const e = await locks.lock('c').acquire({ leaseMs: -1 }).catch((err) => err);
  // The synchronizers: a downgrade (read inside write), permits counted, all names or none.
  const doc = locks.readWriteLock('c-doc');
  const downgraded = await doc.write.withLock((w) => doc.read.withLock((r) => r.token === w.token));
  const pool = locks.semaphore('c-pool', { permits: 2 });
  const permits = await pool.acquire({ permits: 2 });
  const full = (await pool.tryAcquire()) === null;
  await permits.release();
  const mismatch = await locks.semaphore('c-pool', { permits: 3 }).acquire().catch((err) => err);
  const names = await locks.multiLock(['c-a', 'c-b']).withLock((l) => l.tokens.size);
  // Waiting without pub/sub: a client that spins is handed the lock when the holder lets go.
  const spinning = new LockClient(redis, { prefix: 'consumer', wait: 'spin' });
  const held = await locks.lock('c-spin').acquire();
  const waited = spinning.lock('c-spin').acquire({ waitMs: 10000 });
  await held.release();
  const spun = await waited;
  await spun.release();
  await spinning.close();
  const sync = [downgraded, full, (await pool.availablePermits()) === 2, isHoldfastError(mismatch), names === 2, spun.holdCount === 1];
  await locks.close();
  redis.disconnect();
  // The key layout subpath loads from the packed package and names the lock the client took.
  const layout = keys.KEY_LAYOUT_VERSION === 1 && keys.lockKeys('consumer', 'c').lock.endsWith(':l:c');
  console.log(JSON.stringify({ n, typed: isHoldfastError(e) && layout, sync }));
};
main();
`;

const watchdog = (imp: 'import' | 'require') => `
${imp === 'import' ? "import { Redis } from 'ioredis';\nimport { LockClient } from '@holdfast/core';\nimport { Watchdog } from '@holdfast/watchdog';" : "const { Redis } = require('ioredis');\nconst { LockClient } = require('@holdfast/core');\nconst { Watchdog } = require('@holdfast/watchdog');"}
const main = async () => {
  const redis = new Redis(process.env.REDIS_URL);
  const locks = new LockClient(redis, { prefix: 'consumer-dog' });
  // A long lease renewed every 100 ms: a busy machine loses no lease, and a tick that renews
  // all three shows the batched renewal working.
  const dog = new Watchdog(locks, { timeoutMs: 10000, renewIntervalMs: 100 });
  const renewedAll = new Promise((r) => dog.on('renewed', (e) => e.count === 3 && r(true)));
  const lease = await locks.lock('w').acquire();
  // The synchronizers' leases are renewed in the same batched calls.
  const permit = await locks.semaphore('w-pool', { permits: 2 }).acquire();
  const read = await locks.readWriteLock('w-doc').read.acquire();
  await renewedAll;
  const n = lease.isHeld && permit.isHeld && read.isHeld ? 2 : 0;
  await Promise.all([lease.release(), permit.release(), read.release()]);
  await dog.stop();
  await locks.close();
  redis.disconnect();
  console.log(JSON.stringify({ n, typed: lease.leaseMs === 10000 }));
};
main();
`;

// Three small servers (one server under three names is refused by Redlock):
// the package exactly as installed; quorum behaviour is tested in packages/redlock.
const redlock = (imp: 'import' | 'require') => `
${imp === 'import' ? "import { Redis } from 'ioredis';\nimport { Redlock, isHoldfastError } from '@holdfast/redlock';" : "const { Redis } = require('ioredis');\nconst { Redlock, isHoldfastError } = require('@holdfast/redlock');"}
const main = async () => {
  const clients = process.env.REDIS_URLS.split(',').map((url) => new Redis(url));
  // A generous per-instance wait: this checks the package as installed, not the machine's speed
  // (a cold process on a busy machine can take longer than the 50 ms default for its first script).
  const redlock = new Redlock(clients, { prefix: 'consumer-rl', instanceTimeoutMs: 5000 });
  const n = await redlock.lock('r').withLock(async () => redlock.lock('r').withLock((l) => l.holdCount));
  const e = await redlock.lock('r').acquire({ leaseMs: -1 }).catch((err) => err);
  await redlock.close();
  for (const c of clients) c.disconnect();
  console.log(JSON.stringify({ n, typed: isHoldfastError(e) }));
};
main();
`;

const consumers: Consumer[] = [
  {
    pkg: '@holdfast/core',
    dir: 'packages/core',
    with: [],
    esm: core('import'),
    cjs: core('require'),
    ts: `import { Redis } from 'ioredis';
import { LockClient, PermitCountMismatchError, type Lease, type LockClientEvents, type MultiLease, type PermitLease, type ReadWriteLock } from '@holdfast/core';
import { KEY_LAYOUT_VERSION, lockKeys } from '@holdfast/core/keys';
const locks = new LockClient(new Redis(), { leaseMs: 1000 });
const lease: Promise<Lease> = locks.lock('x').acquire({ waitMs: 10 });
const onLost = (...[e]: LockClientEvents['lost']) => e.reason satisfies 'expired' | 'taken' | 'deleted' | 'unreachable' | 'closed';
locks.on('lost', onLost);
const doc: ReadWriteLock = locks.readWriteLock('d');
const read: Promise<Lease> = doc.read.acquire({ waitMs: 10 });
const permit: Promise<PermitLease | null> = locks.semaphore('s', { permits: 4 }).tryAcquire({ permits: 2 });
const both: Promise<number> = locks.multiLock(['a', 'b']).withLock((l: MultiLease) => l.tokens.size);
permit.catch((e: unknown) => e instanceof PermitCountMismatchError && e.code);
const key: string = lockKeys('holdfast', 'x').lock;
const version: number = KEY_LAYOUT_VERSION;
void [lease, read, both, key, version];
`,
  },
  {
    pkg: '@holdfast/watchdog',
    dir: 'packages/watchdog',
    with: ['packages/core'],
    esm: watchdog('import'),
    cjs: watchdog('require'),
    ts: `import { Redis } from 'ioredis';
import { LockClient } from '@holdfast/core';
import { Watchdog, type LeaseLostEvent } from '@holdfast/watchdog';
const dog = new Watchdog(new LockClient(new Redis()), { timeoutMs: 3000 });
dog.on('lost', (e: LeaseLostEvent) => e.reason satisfies string);
void dog.stop();
`,
  },
  {
    pkg: '@holdfast/redlock',
    dir: 'packages/redlock',
    with: ['packages/core'],
    esm: redlock('import'),
    cjs: redlock('require'),
    ts: `import { Redis } from 'ioredis';
import { Redlock, QuorumError, type RedlockLease } from '@holdfast/redlock';
const redlock = new Redlock([new Redis(), new Redis(6380), new Redis(6381)], { instanceTimeoutMs: 50 });
const lease: Promise<RedlockLease> = redlock.lock('x').acquire({ waitMs: 10 });
lease.then((l) => l.validityMs satisfies number, (e: unknown) => e instanceof QuorumError);
`,
  },
];

const packed = new Map<string, string>();
let work: string;
let server: RedisServer;
let servers: RedisServer[] = [];

async function pack(dir: string): Promise<string> {
  const cached = packed.get(dir);
  if (cached) return cached;
  const out = join(work, 'tarballs');
  const before = new Set(existsSync(out) ? await readdir(out) : []);
  await run('pnpm', ['pack', '--pack-destination', out], { cwd: join(root, dir) });
  const file = (await readdir(out)).find((f) => !before.has(f))!;
  packed.set(dir, join(out, file));
  return join(out, file);
}

/**
 * Jest (jest@30), installed once into a folder of its own for every Jest test here, each of which
 * installs only its packages and client: Jest resolves a test file's `require()` from the file's
 * folder, so the app's node_modules is what the test sees. Resolves with Jest's bin.
 */
let jestInstall: Promise<string> | undefined;
function jestBin(): Promise<string> {
  jestInstall ??= (async () => {
    const dir = join(work, 'jest-runner');
    await run('mkdir', ['-p', dir]);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'jest-runner', private: true }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', 'jest@30'], { cwd: dir });
    return join(dir, 'node_modules/jest/bin/jest.js');
  })();
  return jestInstall;
}

/** Runs Jest over the tests of `app` with `env`; resolves with its report (on stderr), or why it failed. */
async function runJest(app: string, env: NodeJS.ProcessEnv): Promise<string> {
  const bin = await jestBin();
  return run('node', [bin, '--ci', '--forceExit', '--rootDir', app], { cwd: app, env: { ...env, CI: '1' } }).then(
    ({ stderr }) => stderr,
    (error: { stdout?: string; stderr?: string }) => `jest failed:\n${error.stderr ?? ''}${error.stdout ?? ''}`,
  );
}

describe('packed packages installed alone', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-consumer-'));
    servers = await startRedisServers(3);
    server = servers[0]!;
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    if (work) await rm(work, { recursive: true, force: true });
  });

  for (const c of consumers) {
    it(`${c.pkg} works from import, require and TypeScript`, async () => {
      const app = join(work, c.pkg.replace('/', '-'));
      await run('mkdir', ['-p', app]);
      await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
      const tarballs = [await pack(c.dir), ...(await Promise.all(c.with.map(pack)))];
      await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, 'ioredis', '@types/node@20'], {
        cwd: app,
      });
      // The ioredis a user gets is one the package declares (and the suite tests).
      const installed = JSON.parse(await readFile(join(app, 'node_modules/ioredis/package.json'), 'utf8')) as { version: string };
      const declared = JSON.parse(await readFile(join(app, 'node_modules', c.pkg, 'package.json'), 'utf8')) as {
        peerDependencies: Record<string, string>;
      };
      const majors = declared.peerDependencies.ioredis!.split('||').map((range) => /^\^(\d+)\./.exec(range.trim())?.[1]);
      expect(majors).toContain(installed.version.split('.')[0]);
      await writeFile(join(app, 'esm.mjs'), c.esm);
      await writeFile(join(app, 'cjs.cjs'), c.cjs);
      await writeFile(join(app, 'check.ts'), c.ts);
      await writeFile(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], lib: ['ES2022', 'ESNext.Disposable', 'DOM'] },
          files: ['check.ts'],
        }),
      );
      const env = { ...process.env, REDIS_URL: server.url, REDIS_URLS: servers.map((s) => s.url).join(',') };
      const esm = await run('node', ['esm.mjs'], { cwd: app, env });
      const cjs = await run('node', ['cjs.cjs'], { cwd: app, env });
      // As a CommonJS loader without require(esm) sees it (Jest, older Node):
      // an ESM-only dependency required from the CJS build would fail to load.
      const cjsOnly = await run('node', ['--no-experimental-require-module', 'cjs.cjs'], { cwd: app, env });
      const expected = { n: 2, typed: true, ...(c.pkg === '@holdfast/core' ? { sync: [true, true, true, true, true, true] } : {}) };
      expect(JSON.parse(esm.stdout)).toEqual(expected);
      expect(JSON.parse(cjs.stdout)).toEqual(expected);
      expect(JSON.parse(cjsOnly.stdout)).toEqual(expected);
      const typecheck = await run('node', [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
        (error: { stdout?: string }) => ({ stdout: `tsc failed:\n${error.stdout ?? String(error)}` }),
      );
      expect(typecheck.stdout).toBe('');
    }, 180_000);
  }

  it('@holdfast/cli installed alone: the holdfast bin lists a lock a packed @holdfast/core holds', async () => {
    const app = join(work, 'cli-app');
    await run('mkdir', ['-p', app]);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'cli-app', private: true, type: 'module' }));
    // One at a time: pack() finds its tarball as the new file in the folder.
    const tarballs = [await pack('packages/cli'), await pack('packages/core')];
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, 'ioredis'], { cwd: app });
    await writeFile(
      join(app, 'hold.mjs'),
      `import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { LockClient } from '@holdfast/core';
const redis = new Redis(process.env.REDIS_URL);
const locks = new LockClient(redis, { prefix: 'consumer-cli', name: 'packed' });
const lease = await locks.lock('held').acquire();
const { stdout } = await promisify(execFile)('node_modules/.bin/holdfast', ['ls', '--json', '--url', process.env.REDIS_URL, '--prefix', 'consumer-cli']);
await lease.release();
await locks.close();
redis.disconnect();
const [state] = JSON.parse(stdout);
console.log(JSON.stringify({ name: state.name, holder: state.holders[0].client.split(' ')[0] }));
`,
    );
    const env = { ...process.env, REDIS_URL: server.url };
    const held = await run('node', ['hold.mjs'], { cwd: app, env });
    expect(JSON.parse(held.stdout)).toEqual({ name: 'held', holder: 'packed' });
    const nothing = await run('node_modules/.bin/holdfast', ['ls', '--url', server.url, '--prefix', 'consumer-cli'], { cwd: app }).catch(
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    expect(nothing).toEqual({ code: 3, stderr: 'holdfast: Nothing held under prefix `consumer-cli`\n' });
  }, 180_000);

  it('@holdfast/otel installed with @opentelemetry/api only: import, require and TypeScript', async () => {
    const app = join(work, 'otel-app');
    await run('mkdir', ['-p', app]);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'otel-app', private: true }));
    const tarballs = [await pack('packages/otel'), await pack('packages/core')];
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, 'ioredis', '@opentelemetry/api@1.9', '@types/node@20'], {
      cwd: app,
    });
    const script = (imp: 'import' | 'require') => `
${imp === 'import' ? "import { Redis } from 'ioredis';\nimport { LockClient } from '@holdfast/core';\nimport { instrumentHoldfast } from '@holdfast/otel';" : "const { Redis } = require('ioredis');\nconst { LockClient } = require('@holdfast/core');\nconst { instrumentHoldfast } = require('@holdfast/otel');"}
const main = async () => {
  // The global (no-op) providers: recording through them must not disturb the lock.
  const instrumentation = instrumentHoldfast({ lockNameAttribute: true });
  const redis = new Redis(process.env.REDIS_URL);
  const locks = new LockClient(redis, { prefix: 'consumer-otel' });
  const n = await locks.lock('o').withLock(async () => locks.lock('o').withLock((l) => l.holdCount));
  instrumentation.disable();
  await locks.close();
  redis.disconnect();
  console.log(JSON.stringify({ n }));
};
main();
`;
    await writeFile(join(app, 'esm.mjs'), script('import'));
    await writeFile(join(app, 'cjs.cjs'), script('require'));
    await writeFile(
      join(app, 'check.ts'),
      `import { instrumentHoldfast, ATTRIBUTES, type HoldfastInstrumentation } from '@holdfast/otel';
const i: HoldfastInstrumentation = instrumentHoldfast({ spans: false });
ATTRIBUTES.kind satisfies 'holdfast.lock.kind';
i.disable();
`,
    );
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
        files: ['check.ts'],
      }),
    );
    const env = { ...process.env, REDIS_URL: server.url };
    expect(JSON.parse((await run('node', ['esm.mjs'], { cwd: app, env })).stdout)).toEqual({ n: 2 });
    expect(JSON.parse((await run('node', ['cjs.cjs'], { cwd: app, env })).stdout)).toEqual({ n: 2 });
    const typecheck = await run('node', [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
      (error: { stdout?: string }) => ({ stdout: `tsc failed:\n${error.stdout ?? String(error)}` }),
    );
    expect(typecheck.stdout).toBe('');
  }, 180_000);

  it('@holdfast/core and @holdfast/redlock load and lock under Jest (CommonJS, no require(esm))', async () => {
    const app = join(work, 'jest-app');
    await run('mkdir', ['-p', app]);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'jest-app', private: true }));
    const tarballs = await Promise.all(['packages/core', 'packages/redlock'].map(pack));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, 'ioredis'], {
      cwd: app,
    });
    await writeFile(
      join(app, 'locks.test.js'),
      `const { Redis } = require('ioredis');
const { LockClient } = require('@holdfast/core');
const { Redlock } = require('@holdfast/redlock');
test('a lock is taken, re-entered and released', async () => {
  const redis = new Redis(process.env.REDIS_URL);
  const locks = new LockClient(redis, { prefix: 'jest' });
  const n = await locks.lock('j').withLock(() => locks.lock('j').withLock((l) => l.holdCount));
  await locks.close();
  redis.disconnect();
  expect(n).toBe(2);
  expect(typeof Redlock).toBe('function');
}, 60000); // Jest's 5 s default is a speed limit on a busy machine
`,
    );
    expect(await runJest(app, { ...process.env, REDIS_URL: server.url })).toMatch(/Tests:\s+1 passed, 1 total/);
  }, 240_000);

  // The same packages with node-redis (`redis`) instead of, and beside, ioredis.
  nodeRedisConsumerTests({ work: () => work, pack, urls: () => servers.map((s) => s.url), runJest });

  // @holdfast/nestjs in a Nest application, Nest 11 and 10.
  nestConsumerTests({ work: () => work, pack, urls: () => servers.map((s) => s.url), runJest });
});
