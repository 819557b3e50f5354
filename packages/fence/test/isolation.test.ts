import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOffError, TransactionAbortedError } from '../src/errors.js';
import * as fenceMysql from '../src/mysql.js';
import * as fencePg from '../src/pg.js';
import { testMysql, testPostgres, uniqueTable } from '@holdfast/test-utils/databases';

/** Resolves when `probe` says so; the probes below ask the database itself, never a clock. */
async function until(probe: () => Promise<boolean>, intervalMs = 10): Promise<void> {
  // The deadline only turns a broken test into a failure instead of a hang.
  const deadline = Date.now() + 20_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('the database never reached the awaited state');
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * The check and the writes are atomic at each database's default isolation level: a writer with
 * an older token that reaches the fence while a newer writer's transaction is open waits on the
 * fence row, and is refused once the newer one commits.
 */
describe('PostgreSQL: isolation and clients', () => {
  const table = uniqueTable();
  const options = { table };
  let pool: pg.Pool;
  const client = async () => {
    const c = new pg.Client({ connectionString: (await testPostgres()).url });
    await c.connect();
    return c;
  };
  const waiting = (pid: number) => async () =>
    (await pool.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'", [pid])).rowCount === 1;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: (await testPostgres()).url, max: 4 });
    await fencePg.createFenceTable(pool, options);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });

  it('runs at READ COMMITTED by default, where an older token waiting on a newer open transaction is refused', async () => {
    const old = await client();
    try {
      const pid = (await old.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const held = gate();
      let level = '';
      const newer = fencePg.fencedTransaction(pool, { resource: 'rc', token: 6 }, async (tx) => {
        level = (await tx.query('SHOW transaction_isolation')).rows[0].transaction_isolation;
        await held.opened;
      }, options);
      await until(async () => level !== '');
      const older = fencePg.fencedTransaction(old, { resource: 'rc', token: 5 }, async () => 'written', options).catch((e: unknown) => e);
      await until(waiting(pid));
      held.open();
      await newer;
      expect(level).toBe('read committed');
      expect(await older).toMatchObject({ code: 'ERR_FENCED_OFF', token: 5, currentToken: 6 });
      // A client passed in is used as it is and left connected.
      expect((await old.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    } finally {
      await old.end();
    }
  });

  it('under REPEATABLE READ, the serialization failure passes through unretried (fn never runs)', async () => {
    const late = await client();
    try {
      await late.query("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      const pid = (await late.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const held = gate();
      let inside = false;
      const first = fencePg.fencedTransaction(pool, { resource: 'rr', token: 1 }, async () => {
        inside = true;
        await held.opened;
      }, options);
      await until(async () => inside);
      let calls = 0;
      const second = fencePg.fencedTransaction(late, { resource: 'rr', token: 2 }, async () => calls++, options).catch((e: unknown) => e);
      await until(waiting(pid));
      held.open();
      await first;
      const error = await second;
      expect(error).toBeInstanceOf(pg.DatabaseError);
      expect(error).toMatchObject({ code: '40001' });
      expect(calls).toBe(0);
      expect(await fencePg.lastToken(pool, 'rr', options)).toBe(1);
    } finally {
      await late.end();
    }
  });

  it('refuses to report a commit PostgreSQL answered with ROLLBACK (fn swallowed a failed statement)', async () => {
    const error = await fencePg
      .fencedTransaction(pool, { resource: 'aborted', token: 3 }, async (tx) => {
        await tx.query('SELECT * FROM no_such_table_here').catch(() => {});
        return 'looks fine';
      }, options)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionAbortedError);
    expect(error).toMatchObject({ code: 'ERR_TRANSACTION_ABORTED' });
    expect(await fencePg.lastToken(pool, 'aborted', options)).toBeNull();
  });

  it('createFenceTable from several sessions at once: every call succeeds', async () => {
    const other = uniqueTable();
    try {
      await Promise.all(Array.from({ length: 4 }, () => fencePg.createFenceTable(pool, { table: other })));
      expect(await fencePg.lastToken(pool, 'x', { table: other })).toBeNull();
    } finally {
      await pool.query(`DROP TABLE IF EXISTS ${other}`);
    }
  });
});

/**
 * InnoDB refreshes information_schema.innodb_trx only when it was last read more than 0.1 s ago:
 * a probe that asks more often than that reads the same stale rows for ever.
 */
const INNODB_TRX_REFRESH_MS = 150;

describe('MariaDB: isolation and connections', () => {
  const table = uniqueTable();
  const options = { table };
  let pool: mysql.Pool;
  const connection = async () => mysql.createConnection({ uri: (await testMysql()).url });
  const waiting = (thread: number) => async () => {
    const [rows] = await pool.query<mysql.RowDataPacket[]>(
      "SELECT 1 FROM information_schema.innodb_trx WHERE trx_mysql_thread_id = ? AND trx_state = 'LOCK WAIT'",
      [thread],
    );
    return rows.length === 1;
  };

  beforeAll(async () => {
    pool = mysql.createPool({ uri: (await testMysql()).url, connectionLimit: 4 });
    await fenceMysql.createFenceTable(pool, options);
  });
  afterAll(async () => {
    await pool.query(`DROP TABLE IF EXISTS ${table}`);
    await pool.end();
  });

  it('runs at REPEATABLE READ by default, where an older token waiting on a newer open transaction is refused', async () => {
    const old = await connection();
    try {
      const held = gate();
      let level = '';
      const newer = fenceMysql.fencedTransaction(pool, { resource: 'rr', token: 6 }, async (tx) => {
        const [rows] = await tx.query<mysql.RowDataPacket[]>('SELECT @@tx_isolation AS level');
        level = rows[0]!.level as string;
        await held.opened;
      }, options);
      await until(async () => level !== '');
      const older = fenceMysql.fencedTransaction(old, { resource: 'rr', token: 5 }, async () => 'written', options).catch((e: unknown) => e);
      await until(waiting(old.threadId), INNODB_TRX_REFRESH_MS);
      held.open();
      await newer;
      expect(level).toBe('REPEATABLE-READ');
      expect(await older).toBeInstanceOf(FencedOffError);
      expect(await older).toMatchObject({ token: 5, currentToken: 6 });
      const [rows] = await old.query<mysql.RowDataPacket[]>('SELECT 1 AS one');
      expect(rows[0]!.one).toBe(1);
    } finally {
      await old.end();
    }
  });

  it('READ COMMITTED and SERIALIZABLE chosen by the user: the same refusal', async () => {
    for (const [i, level] of ['READ COMMITTED', 'SERIALIZABLE'].entries()) {
      const old = await connection();
      try {
        await old.query(`SET SESSION TRANSACTION ISOLATION LEVEL ${level}`);
        const held = gate();
        let inside = false;
        const resource = `level-${i}`;
        const newer = fenceMysql.fencedTransaction(pool, { resource, token: 6 }, async () => {
          inside = true;
          await held.opened;
        }, options);
        await until(async () => inside);
        const older = fenceMysql.fencedTransaction(old, { resource, token: 5 }, async () => 'written', options).catch((e: unknown) => e);
        await until(waiting(old.threadId), INNODB_TRX_REFRESH_MS);
        held.open();
        await newer;
        expect(await older).toMatchObject({ code: 'ERR_FENCED_OFF', token: 5, currentToken: 6 });
      } finally {
        await old.end();
      }
    }
  });

  it('reads tokens the driver returns as strings (supportBigNumbers + bigNumberStrings)', async () => {
    const strings = await mysql.createConnection({ uri: (await testMysql()).url, supportBigNumbers: true, bigNumberStrings: true });
    try {
      await fenceMysql.fencedTransaction(strings, { resource: 'big', token: 2 ** 40 }, async () => {}, options);
      await expect(fenceMysql.fencedTransaction(strings, { resource: 'big', token: 5 }, async () => {}, options)).rejects.toMatchObject({
        currentToken: 2 ** 40,
      });
      expect(await fenceMysql.lastToken(strings, 'big', options)).toBe(2 ** 40);
    } finally {
      await strings.end();
    }
  });
});
