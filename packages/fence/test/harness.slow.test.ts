import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import * as fenceMysql from '../src/mysql.js';
import * as fencePg from '../src/pg.js';
import { findMysql, findPostgres, pingMysql, pingPostgres } from '@holdfast/test-utils/databases';
import { MARIADB_MISSING, POSTGRES_MISSING, spawnMariadb, spawnPostgres, type SpawnedServer } from '@holdfast/test-utils/databases';

/**
 * The database harness's last two resorts, on a machine that runs neither server: a throwaway
 * server from the installed binaries, and, without them, an error naming the package to install.
 */
describe('database harness', () => {
  const started: SpawnedServer[] = [];
  afterAll(async () => {
    await Promise.all(started.map((server) => server.stop()));
  });

  it('starts a throwaway PostgreSQL (initdb + postgres) that fenced transactions run on', async () => {
    const server = await spawnPostgres(pingPostgres);
    started.push(server);
    const pool = new pg.Pool({ connectionString: server.url, max: 2 });
    // pool.end() resolves once its clients are told to end, not once their connections closed
    // (and its 'remove' comes only after a client's end): a server stopped in between terminates
    // them (57P01), which the pool raises as an 'error' event. So every client's end is awaited
    // from its connect on, and the pool's errors are recorded and asserted, never thrown into the void.
    const closed: Promise<unknown>[] = [];
    const poolErrors: unknown[] = [];
    pool.on('connect', (client: pg.PoolClient) => closed.push(new Promise((resolve) => client.once('end', resolve))));
    pool.on('error', (error) => poolErrors.push(error));
    try {
      await fencePg.createFenceTable(pool);
      expect(await fencePg.fencedTransaction(pool, { resource: 'h', token: 2 }, async (tx) => (await tx.query('SELECT 1 AS one')).rows[0].one)).toBe(1);
      await expect(fencePg.fencedTransaction(pool, { resource: 'h', token: 1 }, async () => {})).rejects.toMatchObject({ code: 'ERR_FENCED_OFF' });
    } finally {
      await pool.end();
      await Promise.all(closed);
    }
    await server.stop();
    expect(await pingPostgres(server.url)).toBe(false);
    expect(poolErrors).toEqual([]);
  }, 60_000);

  it('starts a throwaway MariaDB (mariadb-install-db + mariadbd) that fenced transactions run on', async () => {
    const server = await spawnMariadb(pingMysql);
    started.push(server);
    const pool = mysql.createPool({ uri: server.url, connectionLimit: 2 });
    try {
      await pool.query('CREATE DATABASE fence_harness');
      const options = { table: 'holdfast_fences' };
      const connection = await mysql.createConnection({ uri: server.url.replace(/\/mysql$/, '/fence_harness') });
      try {
        await fenceMysql.createFenceTable(connection, options);
        await fenceMysql.fencedTransaction(connection, { resource: 'h', token: 2 }, async () => {}, options);
        await expect(fenceMysql.fencedTransaction(connection, { resource: 'h', token: 1 }, async () => {}, options)).rejects.toMatchObject({
          code: 'ERR_FENCED_OFF',
        });
      } finally {
        await connection.end();
      }
    } finally {
      await pool.end();
    }
    await server.stop();
    expect(await pingMysql(server.url)).toBe(false);
  }, 90_000);

  it('without the binaries, says which package to install', async () => {
    const nowhere = { path: '/nonexistent', extraDirs: [] };
    await expect(spawnPostgres(pingPostgres, nowhere)).rejects.toThrow(POSTGRES_MISSING);
    await expect(spawnMariadb(pingMysql, nowhere)).rejects.toThrow(MARIADB_MISSING);
    expect(POSTGRES_MISSING).toContain('apt-get install postgresql');
    expect(MARIADB_MISSING).toContain('apt-get install mariadb-server');
  });

  it('PG_URL / MYSQL_URL that do not answer fail at once, naming the variable', async () => {
    const saved = { pg: process.env.PG_URL, mysql: process.env.MYSQL_URL };
    process.env.PG_URL = 'postgres://postgres@127.0.0.1:1/test';
    process.env.MYSQL_URL = 'mysql://root@127.0.0.1:1/test';
    try {
      await expect(findPostgres()).rejects.toThrow('PG_URL (postgres://postgres@127.0.0.1:1/test) does not answer');
      await expect(findMysql()).rejects.toThrow('MYSQL_URL (mysql://root@127.0.0.1:1/test) does not answer');
    } finally {
      if (saved.pg === undefined) delete process.env.PG_URL;
      else process.env.PG_URL = saved.pg;
      if (saved.mysql === undefined) delete process.env.MYSQL_URL;
      else process.env.MYSQL_URL = saved.mysql;
    }
  });
});
