import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import mysql from 'mysql2/promise';
import pg from 'pg';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testMysql, testPostgres, uniqueTable } from '@holdfast/test-utils/databases';

/**
 * The README's promises that are code: its quick start, run as a reader would paste it (through
 * the built packages, in a folder of its own, exiting by itself), and the single-statement SQL for
 * a fence column in the user's own table, statement for statement, on both databases.
 */
const here = path.resolve(import.meta.dirname, '..');
const readme = readFileSync(path.join(here, 'README.md'), 'utf8');
const blocks = (lang: string) => [...readme.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\``, 'gm'))].map((m) => m[1]!);

function userProject(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'holdfast-fence-readme-'));
  mkdirSync(path.join(dir, 'node_modules', '@holdfast'), { recursive: true });
  symlinkSync(path.join(here, '..', 'core'), path.join(dir, 'node_modules', '@holdfast', 'core'), 'dir');
  symlinkSync(here, path.join(dir, 'node_modules', '@holdfast', 'fence'), 'dir');
  for (const name of ['ioredis', 'pg']) symlinkSync(realpathSync(path.join(here, 'node_modules', name)), path.join(dir, 'node_modules', name), 'dir');
  return dir;
}

describe('packages/fence/README.md', () => {
  let redis: RedisServer;
  let admin: pg.Pool;
  const schema = uniqueTable('readme');

  beforeAll(async () => {
    redis = await startRedis();
    admin = new pg.Pool({ connectionString: (await testPostgres()).url, max: 1 });
    await admin.query(`CREATE SCHEMA ${schema}`);
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
    await redis.stop();
  });

  it('the quick start runs as it stands and commits the fenced write', async () => {
    const snippet = blocks('ts')[0]!;
    const url = new URL((await testPostgres()).url);
    // Its own schema: the snippet's tables (`invoices`, `holdfast_fences`) meet nothing else.
    url.searchParams.set('options', `-c search_path=${schema}`);
    const code = snippet
      .replace('new Redis()', `new Redis(${JSON.stringify(redis.url)})`)
      .replace("'postgres://postgres@localhost:5432/app'", JSON.stringify(url.toString()));
    expect(code).not.toBe(snippet);
    const dir = userProject();
    try {
      writeFileSync(path.join(dir, 'snippet.mjs'), ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
      const run = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = execFile(process.execPath, ['snippet.mjs'], { cwd: dir, timeout: 30_000, killSignal: 'SIGKILL' }, (_e, _out, stderr) =>
          resolve({ code: child.exitCode, stderr }),
        );
      });
      expect(run).toEqual({ code: 0, stderr: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect((await admin.query(`SELECT paid FROM ${schema}.invoices WHERE id = 42`)).rows).toEqual([{ paid: true }]);
    expect((await admin.query(`SELECT resource, token FROM ${schema}.holdfast_fences`)).rows).toEqual([{ resource: 'invoice:42', token: '1' }]);
  });

  const sql = blocks('sql').find((block) => block.includes('fence bigint'))!;
  const line = (start: string) => sql.split('\n').filter((l) => l.trimStart().startsWith(start));
  const alter = /-- once: (ALTER TABLE invoices .*)$/m.exec(sql)![1]!;

  it('the fence-column statements on PostgreSQL: refused below the stored token, equal passes', async () => {
    const table = uniqueTable('invoices');
    const own = (text: string) => text.replaceAll('invoices', table);
    await admin.query(`CREATE TABLE ${table} (id int PRIMARY KEY, paid boolean NOT NULL DEFAULT false)`);
    try {
      await admin.query(own(alter));
      await admin.query(`INSERT INTO ${table} (id) VALUES (42)`);
      const [update] = line('UPDATE invoices SET paid = true');
      const counts = [];
      for (const token of [5, 5, 3, 7]) counts.push((await admin.query(own(update!), [42, token])).rowCount);
      expect(counts).toEqual([1, 1, 0, 1]);
      const upsert = own(sql.slice(sql.indexOf('INSERT INTO invoices'), sql.indexOf('\n-- MySQL')));
      const upserts = [];
      for (const token of [2, 2, 1, 4]) upserts.push((await admin.query(upsert, [43, token])).rowCount);
      expect(upserts).toEqual([1, 1, 0, 1]);
      expect((await admin.query(`SELECT id, fence FROM ${table} ORDER BY id`)).rows).toEqual([
        { id: 42, fence: '7' },
        { id: 43, fence: '4' },
      ]);
    } finally {
      await admin.query(`DROP TABLE IF EXISTS ${table}`);
    }
  });

  it('the fence-column statement on MariaDB: affectedRows 0 below the stored token, 1 for an equal one', async () => {
    const table = uniqueTable('invoices');
    const own = (text: string) => text.replaceAll('invoices', table);
    const connection = await mysql.createConnection({ uri: (await testMysql()).url });
    try {
      await connection.query(`CREATE TABLE ${table} (id int PRIMARY KEY, paid tinyint NOT NULL DEFAULT 0)`);
      await connection.query(own(alter));
      await connection.query(`INSERT INTO ${table} (id) VALUES (42)`);
      const [update] = line('UPDATE invoices SET paid = 1');
      const counts = [];
      for (const token of [5, 5, 3, 7]) {
        const [result] = await connection.query<mysql.ResultSetHeader>(own(update!.replace(/\s*--.*$/, '')), [token, 42, token]);
        counts.push(result.affectedRows);
      }
      expect(counts).toEqual([1, 1, 0, 1]);
    } finally {
      await connection.query(`DROP TABLE IF EXISTS ${table}`);
      await connection.end();
    }
  });
});
