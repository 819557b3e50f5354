// One face over both databases for the tests that hold for both: the same behaviour, asserted
// once per database. SQL in the tests is written with `?` placeholders; PostgreSQL gets `$n`.
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Fence, FenceOptions } from '../src/fence.js';
import * as fenceMysql from '../src/mysql.js';
import * as fencePg from '../src/pg.js';
import { testMysql, testPostgres } from '@holdfast/test-utils/databases';

/** Runs SQL on a transaction's connection. */
export type Exec = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

export interface Driver {
  readonly name: 'postgres' | 'mariadb';
  readonly url: string;
  fenced<T>(fences: Fence | Fence[], fn: (exec: Exec, tx: unknown) => Promise<T>, options?: FenceOptions): Promise<T>;
  createFenceTable(options?: FenceOptions): Promise<void>;
  lastToken(resource: string, options?: FenceOptions): Promise<number | null>;
  /** SQL on the pool, outside any fenced transaction. */
  exec: Exec;
  /** Connections of the pool not checked out / all of them. */
  poolCounts(): { idle: number; total: number };
  close(): Promise<void>;
}

const toPg = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

export function pgExec(client: { query: pg.ClientBase['query'] }): Exec {
  return async (sql, params = []) => (await client.query(toPg(sql), params)).rows as Record<string, unknown>[];
}

export function mysqlExec(connection: { query: mysql.Connection['query'] }): Exec {
  return async (sql, params = []) => {
    const [rows] = await connection.query(sql, params);
    return (Array.isArray(rows) ? rows : []) as Record<string, unknown>[];
  };
}

/** The character set a driver's connections talk in: the drivers' default, or Latin-1. */
export type Charset = 'utf8' | 'latin1';

/**
 * A pg client whose connection talks Latin-1. node-pg asks for UTF-8 in its startup message, over
 * any `options`, so the encoding is set once connected, before the pool hands the client out.
 */
class Latin1Client extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: (err: Error | null, client?: pg.Client) => void): void;
  override connect(callback?: (err: Error | null, client?: pg.Client) => void): Promise<pg.Client> | void {
    const ready = super.connect().then(async () => {
      await this.query("SET client_encoding = 'LATIN1'");
      return this as pg.Client;
    });
    if (!callback) return ready;
    ready.then((client) => callback(null, client), (error: Error) => callback(error));
  }
}

export async function postgresDriver(poolSize = 10, charset: Charset = 'utf8'): Promise<Driver> {
  const { url } = await testPostgres();
  const pool = new pg.Pool({ connectionString: url, max: poolSize, ...(charset === 'latin1' ? { Client: Latin1Client } : {}) });
  return {
    name: 'postgres',
    url,
    fenced: (fences, fn, options) => fencePg.fencedTransaction(pool, fences, (tx) => fn(pgExec(tx), tx), options),
    createFenceTable: (options) => fencePg.createFenceTable(pool, options),
    lastToken: (resource, options) => fencePg.lastToken(pool, resource, options),
    exec: pgExec(pool),
    poolCounts: () => ({ idle: pool.idleCount, total: pool.totalCount }),
    close: () => pool.end(),
  };
}

export async function mariadbDriver(poolSize = 10, charset: Charset = 'utf8'): Promise<Driver> {
  const { url } = await testMysql();
  const pool = mysql.createPool({ uri: url, connectionLimit: poolSize, ...(charset === 'latin1' ? { charset: 'latin1' } : {}) });
  // mysql2 keeps its counts on the callback pool underneath the promise one.
  const inner = (pool as unknown as { pool: { _allConnections: { length: number }; _freeConnections: { length: number } } }).pool;
  return {
    name: 'mariadb',
    url,
    fenced: (fences, fn, options) => fenceMysql.fencedTransaction(pool, fences, (tx) => fn(mysqlExec(tx), tx), options),
    createFenceTable: (options) => fenceMysql.createFenceTable(pool, options),
    lastToken: (resource, options) => fenceMysql.lastToken(pool, resource, options),
    exec: mysqlExec(pool),
    poolCounts: () => ({ idle: inner._freeConnections.length, total: inner._allConnections.length }),
    close: () => pool.end(),
  };
}

export const DRIVERS = { postgres: postgresDriver, mariadb: mariadbDriver } as const;
