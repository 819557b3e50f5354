/**
 * `@holdfast/fence/pg`: fenced transactions on PostgreSQL through `pg`.
 * @packageDocumentation
 */
import type { ClientBase, Pool, PoolClient } from 'pg';
import { TransactionAbortedError } from './errors.js';
import { checkFn, fail, fencesOf, keyOf, resourceOf, storedToken, tableOf, type Fence, type FenceOptions } from './fence.js';
import { runFenced, type Session } from './run.js';

export { FencedOffError, TransactionAbortedError } from './errors.js';
export { DEFAULT_TABLE, MAX_RESOURCE_BYTES, MAX_TABLE_LENGTH } from './fence.js';
export type { Fence, FenceOptions } from './fence.js';

/** What `fn` gets: a `PoolClient` checked out of a `Pool`, or the very client passed. */
export type PgTransactionClient<D extends Pool | ClientBase> = D extends Pool ? PoolClient : D;

/**
 * The resource, from its UTF-8 bytes: a `bytea` parameter reaches the server
 * as it is, where text would be read in the connection's `client_encoding`.
 */
const RESOURCE = "convert_from($1::bytea, 'UTF8')";

/** The SQL this module runs, for the README and for anyone who audits it. */
export const pgSql = {
  /** `createFenceTable()`. */
  createTable: (table: string) =>
    `CREATE TABLE IF NOT EXISTS "${table}" (resource text PRIMARY KEY, token bigint NOT NULL CHECK (token >= 0))`,
  /**
   * The fence: inserts the row, or raises its token when the stored one is
   * not greater. The conflicting row is locked either way, until the
   * transaction ends; no row back means a greater token is stored.
   */
  raise: (table: string) =>
    `INSERT INTO "${table}" AS f (resource, token) VALUES (${RESOURCE}, $2) ` +
    'ON CONFLICT (resource) DO UPDATE SET token = EXCLUDED.token WHERE f.token <= EXCLUDED.token RETURNING f.token',
  /** `lastToken()`, and the stored token for `FencedOffError`. */
  read: (table: string) => `SELECT token FROM "${table}" WHERE resource = ${RESOURCE}`,
} as const;

function isPool(db: Pool | ClientBase): db is Pool {
  return typeof (db as Pool).totalCount === 'number';
}

function checkDb(db: unknown): asserts db is Pool | ClientBase {
  if (typeof db !== 'object' || db === null || typeof (db as ClientBase).query !== 'function') {
    fail('db', 'a pg Pool or Client', db);
  }
}

function session<C extends ClientBase>(client: C, table: string, release: (broken: boolean) => void): Session<C> {
  return {
    tx: client,
    begin: async () => {
      await client.query('BEGIN');
    },
    raise: async (resource, token) => {
      const key = keyOf(resource);
      const raised = await client.query(pgSql.raise(table), [key, token]);
      if (raised.rowCount === 1) return null;
      // The row is ours (locked) until the rollback: what it holds is the newer holder's token.
      const { rows } = await client.query(pgSql.read(table), [key]);
      return storedToken(rows[0]?.token);
    },
    commit: async () => {
      // A transaction in which a statement failed answers COMMIT with ROLLBACK, not an error.
      const result = await client.query('COMMIT');
      if (result.command !== 'COMMIT') throw new TransactionAbortedError();
    },
    rollback: async () => {
      await client.query('ROLLBACK');
    },
    release,
  };
}

/**
 * Runs `fn` in a transaction that first raises the fence of each resource to
 * its token, and is rolled back with `FencedOffError` (before `fn` runs) when
 * a resource already holds a greater token: a lock holder that lost its lock
 * cannot write after a newer holder has. Equal tokens pass (the same holder
 * writing again). The fence rows stay locked until the transaction ends, so
 * writers of one resource commit one after the other, in token order.
 *
 * `db` is a `pg.Pool` (a client is checked out, and always given back) or a
 * connected `pg.Client` / `PoolClient` that is not inside a transaction.
 * Several fences are taken in one global order, whatever order they are given
 * in. Resolves to what `fn` resolves to; `fn`'s errors and the database's
 * reject as the same objects, after the rollback. A serialization failure
 * (SQLSTATE 40001, under REPEATABLE READ or SERIALIZABLE) is not retried.
 */
export async function fencedTransaction<D extends Pool | ClientBase, T>(
  db: D,
  fences: Fence | readonly Fence[],
  fn: (tx: PgTransactionClient<D>) => T | Promise<T>,
  options?: FenceOptions,
): Promise<T> {
  checkDb(db);
  const ordered = fencesOf(fences);
  checkFn(fn);
  const table = tableOf(options);
  if (!isPool(db)) return runFenced(session(db, table, () => {}), ordered, fn as (tx: ClientBase) => T | Promise<T>);
  const client = await db.connect();
  return runFenced(session(client, table, (broken) => client.release(broken)), ordered, fn as (tx: ClientBase) => T | Promise<T>);
}

/**
 * Creates the fence table if it does not exist (idempotent, safe to call from
 * several processes at once): `resource text PRIMARY KEY, token bigint`.
 */
export async function createFenceTable(db: Pool | ClientBase, options?: FenceOptions): Promise<void> {
  checkDb(db);
  const table = tableOf(options);
  try {
    await db.query(pgSql.createTable(table));
  } catch (error) {
    // Two sessions creating the table at once: one of them meets the other's row in the catalog.
    const code = (error as { code?: unknown }).code;
    if (code !== '23505' && code !== '42P07') throw error;
  }
}

/** The token stored at `resource` (the newest holder that wrote it), or `null` when none has. */
export async function lastToken(db: Pool | ClientBase, resource: string, options?: FenceOptions): Promise<number | null> {
  checkDb(db);
  const key = keyOf(resourceOf(resource));
  const { rows } = await db.query(pgSql.read(tableOf(options)), [key]);
  return rows.length === 0 ? null : storedToken(rows[0].token);
}
