/**
 * `@holdfast/fence/mysql`: fenced transactions on MySQL and MariaDB through `mysql2/promise`.
 * @packageDocumentation
 */
import type { Connection, Pool, PoolConnection, RowDataPacket } from 'mysql2/promise';
import { checkFn, fail, fencesOf, keyOf, resourceOf, storedToken, tableOf, type Fence, type FenceOptions } from './fence.js';
import { runFenced, type Session } from './run.js';

export { FencedOffError } from './errors.js';
export { DEFAULT_TABLE, MAX_RESOURCE_BYTES, MAX_TABLE_LENGTH } from './fence.js';
export type { Fence, FenceOptions } from './fence.js';

/** What `fn` gets: a `PoolConnection` taken from a `Pool`, or the very connection passed. */
export type MysqlTransactionConnection<D extends Pool | Connection> = D extends Pool ? PoolConnection : D;

/**
 * The SQL this module runs, for the README and for anyone who audits it. Each
 * `?` for a resource is bound to its UTF-8 bytes (a `Buffer`, sent as a hex
 * literal): a string would be converted to the connection's `charset`.
 */
export const mysqlSql = {
  /** `createFenceTable()`: the key is the resource's UTF-8 bytes, compared exactly (no collation). */
  createTable: (table: string) =>
    `CREATE TABLE IF NOT EXISTS \`${table}\` (resource VARBINARY(1024) NOT NULL PRIMARY KEY, ` +
    'token BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB',
  /** The fence: inserts the row or raises its token, never lowers it; the row stays locked until the transaction ends. */
  raise: (table: string) =>
    `INSERT INTO \`${table}\` (resource, token) VALUES (?, ?) ON DUPLICATE KEY UPDATE token = GREATEST(token, ?)`,
  /** The token the fence left (a locking read: the newest committed version, whatever the isolation level). */
  check: (table: string) => `SELECT token FROM \`${table}\` WHERE resource = ? FOR UPDATE`,
  /** `lastToken()`. */
  read: (table: string) => `SELECT token FROM \`${table}\` WHERE resource = ?`,
} as const;

/** InnoDB rolled the whole transaction back to break a deadlock. */
const ER_LOCK_DEADLOCK = 1213;

function isPool(db: Pool | Connection): db is Pool {
  return typeof (db as Pool).getConnection === 'function';
}

function checkDb(db: unknown): asserts db is Pool | Connection {
  if (typeof db !== 'object' || db === null || typeof (db as Connection).query !== 'function') {
    fail('db', 'a mysql2/promise Pool or Connection', db);
  }
}

function session<C extends Connection>(connection: C, table: string, release: (broken: boolean) => void): Session<C> {
  return {
    tx: connection,
    begin: async () => {
      await connection.query('START TRANSACTION');
    },
    raise: async (resource, token) => {
      const key = keyOf(resource);
      await connection.query(mysqlSql.raise(table), [key, token, token]);
      const [rows] = await connection.query<RowDataPacket[]>(mysqlSql.check(table), [key]);
      const stored = storedToken(rows[0]?.token);
      return stored > token ? stored : null;
    },
    commit: async () => {
      await connection.query('COMMIT');
    },
    rollback: async () => {
      await connection.query('ROLLBACK');
    },
    isFenceDeadlock: (error) => (error as { errno?: unknown }).errno === ER_LOCK_DEADLOCK,
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
 * `db` is a `mysql2/promise` `Pool` (a connection is taken, and always given
 * back) or `Connection` that is not inside a transaction (`START TRANSACTION`
 * would commit it). Several fences are taken in one global order, whatever
 * order they are given in. Resolves to what `fn` resolves to; `fn`'s errors and
 * the database's reject as the same objects, after the rollback. A deadlock
 * while the fence rows are taken (first writers of new resources, through
 * InnoDB's gap locks) is retried after a short random pause, up to 30 times,
 * before `fn` runs; once `fn` runs, nothing is retried (a deadlock or lock
 * wait timeout rejects).
 */
export async function fencedTransaction<D extends Pool | Connection, T>(
  db: D,
  fences: Fence | readonly Fence[],
  fn: (tx: MysqlTransactionConnection<D>) => T | Promise<T>,
  options?: FenceOptions,
): Promise<T> {
  checkDb(db);
  const ordered = fencesOf(fences);
  checkFn(fn);
  const table = tableOf(options);
  if (!isPool(db)) return runFenced(session(db, table, () => {}), ordered, fn as (tx: Connection) => T | Promise<T>);
  const connection = await db.getConnection();
  return runFenced(
    session(connection, table, (broken) => (broken ? connection.destroy() : connection.release())),
    ordered,
    fn as (tx: Connection) => T | Promise<T>,
  );
}

/**
 * Creates the fence table if it does not exist (idempotent):
 * `resource VARBINARY(1024) PRIMARY KEY, token BIGINT UNSIGNED`, InnoDB.
 */
export async function createFenceTable(db: Pool | Connection, options?: FenceOptions): Promise<void> {
  checkDb(db);
  await db.query(mysqlSql.createTable(tableOf(options)));
}

/** The token stored at `resource` (the newest holder that wrote it), or `null` when none has. */
export async function lastToken(db: Pool | Connection, resource: string, options?: FenceOptions): Promise<number | null> {
  checkDb(db);
  const key = keyOf(resourceOf(resource));
  const [rows] = await db.query<RowDataPacket[]>(mysqlSql.read(tableOf(options)), [key]);
  return rows.length === 0 ? null : storedToken(rows[0]!.token);
}
