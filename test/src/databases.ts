// The databases the fence tests run against, found the way the harness finds Redis: the server
// at PG_URL / MYSQL_URL when set, else the one running on this machine (PostgreSQL on
// 127.0.0.1:5432, trust auth, database `test`; MariaDB on 127.0.0.1:3306, root without password,
// database `test`), else a throwaway server from the installed binaries (database-servers.ts), else an
// error naming the package to install. Once per test process; tests create and drop their own
// tables (uniqueTable()).
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { spawnMariadb, spawnPostgres, type BinarySearch, type SpawnedServer } from './database-servers.js';

export { MARIADB_MISSING, POSTGRES_MISSING, spawnMariadb, spawnPostgres, type BinarySearch, type SpawnedServer } from './database-servers.js';

export const LOCAL_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const LOCAL_MYSQL_URL = 'mysql://root@127.0.0.1:3306/test';

/** A database to run the tests on, and where it came from. */
export interface TestDatabase {
  readonly url: string;
  readonly source: 'env' | 'local' | 'spawned';
  readonly description: string;
}

export async function pingPostgres(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function pingMysql(url: string): Promise<boolean> {
  try {
    const connection = await mysql.createConnection({ uri: url, connectTimeout: 2_000 });
    await connection.query('SELECT 1');
    await connection.end();
    return true;
  } catch {
    return false;
  }
}

const spawned: SpawnedServer[] = [];

/** Finds a PostgreSQL (see the top of this file). `search` only matters when one must be started. */
export async function findPostgres(search?: BinarySearch): Promise<TestDatabase> {
  const env = process.env.PG_URL;
  if (env) {
    if (!(await pingPostgres(env))) throw new Error(`PG_URL (${env}) does not answer`);
    return { url: env, source: 'env', description: `PG_URL ${env}` };
  }
  if (await pingPostgres(LOCAL_PG_URL)) return { url: LOCAL_PG_URL, source: 'local', description: `local ${LOCAL_PG_URL}` };
  const server = await spawnPostgres(pingPostgres, search);
  spawned.push(server);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('CREATE DATABASE test');
  await admin.end();
  return { url: server.url.replace(/\/postgres$/, '/test'), source: 'spawned', description: server.description };
}

/** Finds a MySQL or MariaDB (see the top of this file). */
export async function findMysql(search?: BinarySearch): Promise<TestDatabase> {
  const env = process.env.MYSQL_URL;
  if (env) {
    if (!(await pingMysql(env))) throw new Error(`MYSQL_URL (${env}) does not answer`);
    return { url: env, source: 'env', description: `MYSQL_URL ${env}` };
  }
  if (await pingMysql(LOCAL_MYSQL_URL)) return { url: LOCAL_MYSQL_URL, source: 'local', description: `local ${LOCAL_MYSQL_URL}` };
  const server = await spawnMariadb(pingMysql, search);
  spawned.push(server);
  const admin = await mysql.createConnection({ uri: server.url });
  await admin.query('CREATE DATABASE IF NOT EXISTS test');
  await admin.end();
  return { url: server.url.replace(/\/mysql$/, '/test'), source: 'spawned', description: server.description };
}

let postgresOnce: Promise<TestDatabase> | undefined;
let mysqlOnce: Promise<TestDatabase> | undefined;

/** The PostgreSQL of this test process (found once, printed once). */
export function testPostgres(): Promise<TestDatabase> {
  postgresOnce ??= findPostgres().then((db) => {
    console.log(`postgres backend: ${db.source} (${db.description})`);
    return db;
  });
  return postgresOnce;
}

/** The MySQL/MariaDB of this test process (found once, printed once). */
export function testMysql(): Promise<TestDatabase> {
  mysqlOnce ??= findMysql().then((db) => {
    console.log(`mysql backend: ${db.source} (${db.description})`);
    return db;
  });
  return mysqlOnce;
}

/** Stops the servers this process started (the exit hook kills them anyway). */
export async function stopSpawned(): Promise<void> {
  await Promise.all(spawned.splice(0).map((server) => server.stop()));
}

/** A table name no other test uses (tests run in parallel against one database). */
export function uniqueTable(prefix = 'fence'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}
