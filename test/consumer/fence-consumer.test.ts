import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testMysql, testPostgres, uniqueTable } from '@holdfast/test-utils/databases';

/**
 * @holdfast/fence as npm users get it: packed with `pnpm pack` (with @holdfast/core), installed
 * into an empty folder with one driver only, and used from ESM, CommonJS (with and without
 * require(esm)) and TypeScript (strict, `skipLibCheck: false`) against real Redis and databases.
 * The driver not installed must not be needed, by the code or by the types.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');

const program = (imp: 'import' | 'require', driver: 'pg' | 'mysql') => {
  const load =
    imp === 'import'
      ? `import { Redis } from 'ioredis';
import { LockClient, isHoldfastError } from '@holdfast/core';
import { FencedOffError as RootError } from '@holdfast/fence';
${driver === 'pg' ? "import pg from 'pg';" : "import mysql from 'mysql2/promise';"}
import { createFenceTable, fencedTransaction, lastToken, FencedOffError } from '@holdfast/fence/${driver}';`
      : `const { Redis } = require('ioredis');
const { LockClient, isHoldfastError } = require('@holdfast/core');
const { FencedOffError: RootError } = require('@holdfast/fence');
${driver === 'pg' ? "const pg = require('pg');" : "const mysql = require('mysql2/promise');"}
const { createFenceTable, fencedTransaction, lastToken, FencedOffError } = require('@holdfast/fence/${driver}');`;
  const pool = driver === 'pg' ? 'new pg.Pool({ connectionString: process.env.DB_URL, max: 2 })' : 'mysql.createPool({ uri: process.env.DB_URL, connectionLimit: 2 })';
  const one = driver === 'pg' ? '(await tx.query("SELECT 1 AS one")).rows[0].one' : '(await tx.query("SELECT 1 AS one"))[0][0].one';
  return `${load}
const main = async () => {
  const pool = ${pool};
  const redis = new Redis(process.env.REDIS_URL);
  const locks = new LockClient(redis, { prefix: 'consumer-fence' });
  const options = { table: process.env.FENCE_TABLE };
  await createFenceTable(pool, options);
  const lease = await locks.lock('invoice').acquire();
  const one = await fencedTransaction(pool, { resource: 'invoice', token: lease.token }, async (tx) => ${one}, options);
  await lease.release();
  const stale = await fencedTransaction(pool, { resource: 'invoice', token: lease.token - 1 }, async () => 0, options).catch((e) => e);
  const stored = await lastToken(pool, 'invoice', options);
  await locks.close();
  redis.disconnect();
  await pool.end();
  console.log(JSON.stringify({ one, fenced: stale instanceof FencedOffError && isHoldfastError(stale) && stale.code === 'ERR_FENCED_OFF', shared: RootError === FencedOffError, stored: stored === lease.token }));
};
main();
`;
};

const types = {
  pg: `import pg from 'pg';
import { fencedTransaction, type PgTransactionClient } from '@holdfast/fence/pg';
import { FencedOffError, type Fence } from '@holdfast/fence';
declare const pool: pg.Pool;
declare const client: pg.Client;
const fence: Fence = { resource: 'r', token: 1 };
export const a: Promise<number> = fencedTransaction(pool, fence, async (tx: pg.PoolClient) => (await tx.query('SELECT 1')).rowCount ?? 0);
export const b: Promise<string> = fencedTransaction(client, [fence], async (tx: pg.Client) => String(tx.port), { table: 'fences' });
export const c: PgTransactionClient<pg.Pool> | undefined = undefined;
export const d = (e: FencedOffError): number => e.currentToken - e.token;
`,
  mysql: `import mysql from 'mysql2/promise';
import { fencedTransaction, type MysqlTransactionConnection } from '@holdfast/fence/mysql';
import { FencedOffError } from '@holdfast/fence';
declare const pool: mysql.Pool;
declare const connection: mysql.Connection;
export const a: Promise<number> = fencedTransaction(pool, { resource: 'r', token: 1 }, async (tx: mysql.PoolConnection) => tx.threadId);
export const b: Promise<number> = fencedTransaction(connection, { resource: 'r', token: 1 }, async (tx: mysql.Connection) => tx.threadId, { table: 'fences' });
export const c: MysqlTransactionConnection<mysql.Pool> | undefined = undefined;
export const d = (e: FencedOffError): string => e.resource;
`,
};

describe('@holdfast/fence packed and installed alone', () => {
  let work: string;
  let redis: RedisServer;
  const tarballs: string[] = [];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-fence-consumer-'));
    redis = await startRedis();
    const out = join(work, 'tarballs');
    for (const dir of ['packages/core', 'packages/fence']) {
      const before = new Set(existsSync(out) ? await readdir(out) : []);
      await run('pnpm', ['pack', '--pack-destination', out], { cwd: join(root, dir) });
      tarballs.push(join(out, (await readdir(out)).find((file) => !before.has(file))!));
    }
  }, 120_000);
  afterAll(async () => {
    await redis?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  for (const driver of ['pg', 'mysql'] as const) {
    it(`with ${driver === 'pg' ? 'pg and @types/pg' : 'mysql2'} only: import, require and TypeScript`, async () => {
      const app = join(work, driver);
      await run('mkdir', ['-p', app]);
      await writeFile(join(app, 'package.json'), JSON.stringify({ name: `fence-${driver}-app`, private: true }));
      const drivers = driver === 'pg' ? ['pg', '@types/pg'] : ['mysql2'];
      await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs, ...drivers, 'ioredis', '@types/node@20'], { cwd: app });
      // The other driver is an optional peer: npm must not have added it.
      expect(existsSync(join(app, 'node_modules', driver === 'pg' ? 'mysql2' : 'pg'))).toBe(false);

      const db = driver === 'pg' ? await testPostgres() : await testMysql();
      const table = uniqueTable('consumer');
      await writeFile(join(app, 'esm.mjs'), program('import', driver));
      await writeFile(join(app, 'cjs.cjs'), program('require', driver));
      await writeFile(join(app, 'check.ts'), types[driver]);
      // NodeNext, and node10 (`module: commonjs`'s default resolution, which ignores `exports`: the
      // subpaths must resolve through `typesVersions`).
      const configs = {
        'tsconfig.json': { module: 'NodeNext', moduleResolution: 'NodeNext' },
        'tsconfig.node10.json': { module: 'CommonJS', moduleResolution: 'Node10', esModuleInterop: true },
      };
      for (const [file, resolution] of Object.entries(configs)) {
        await writeFile(
          join(app, file),
          JSON.stringify({
            compilerOptions: { ...resolution, target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
            files: ['check.ts'],
          }),
        );
      }
      const env = { ...process.env, REDIS_URL: redis.url, DB_URL: db.url, FENCE_TABLE: table };
      const expected = { one: 1, fenced: true, shared: true, stored: true };
      try {
        expect(JSON.parse((await run('node', ['esm.mjs'], { cwd: app, env })).stdout)).toEqual(expected);
        expect(JSON.parse((await run('node', ['cjs.cjs'], { cwd: app, env })).stdout)).toEqual(expected);
        expect(JSON.parse((await run('node', ['--no-experimental-require-module', 'cjs.cjs'], { cwd: app, env })).stdout)).toEqual(expected);
      } finally {
        const drop = `DROP TABLE IF EXISTS ${table}`;
        await run('node', ['-e', driver === 'pg'
          ? `const pg = require('pg'); const c = new pg.Client(process.env.DB_URL); c.connect().then(() => c.query(${JSON.stringify(drop)})).then(() => c.end());`
          : `require('mysql2/promise').createConnection(process.env.DB_URL).then(async (c) => { await c.query(${JSON.stringify(drop)}); await c.end(); });`], { cwd: app, env });
      }
      for (const file of Object.keys(configs)) {
        const typecheck = await run('node', [tsc, '-p', file], { cwd: app }).catch(
          (error: { stdout?: string }) => ({ stdout: `tsc -p ${file} failed:\n${error.stdout ?? String(error)}` }),
        );
        expect(typecheck.stdout).toBe('');
      }
    }, 240_000);
  }
});
