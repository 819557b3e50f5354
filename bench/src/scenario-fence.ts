// 8.
import mysql from 'mysql2/promise';
import pg from 'pg';
import { fencedTransaction as fencedPg } from '@holdfast/fence/pg';
import { fencedTransaction as fencedMysql } from '@holdfast/fence/mysql';
import { stopSpawned, testMysql, testPostgres, uniqueTable } from '../../packages/fence/test/harness/databases.js';
import type { Sizes } from './options.js';
import { median, summarize } from './stats.js';

export interface FenceBenchResult {
  readonly database: string;
  readonly server: string;
  readonly transactions: number;
  readonly unfenced: { p50Us: number; p99Us: number };
  readonly fenced: { p50Us: number; p99Us: number };
  /** Fenced p50 over unfenced p50 of the same round, median over the rounds. */
  readonly ratio: number;
  /** Statements sent per transaction, BEGIN and COMMIT included. */
  readonly statements: { unfenced: number; fenced: number };
}

interface Target {
  readonly database: string;
  server(): Promise<string>;
  unfenced(): Promise<void>;
  fenced(token: number): Promise<void>;
  close(): Promise<void>;
  readonly statements: { unfenced: number; fenced: number };
}

async function postgres(): Promise<Target> {
  const pool = new pg.Pool({ connectionString: (await testPostgres()).url, max: 1 });
  const table = uniqueTable('bench_rows');
  const fences = uniqueTable('bench_fences');
  await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL)`);
  await pool.query(`INSERT INTO ${table} VALUES (1, 0)`);
  await pool.query(`CREATE TABLE ${fences} (resource text PRIMARY KEY, token bigint NOT NULL CHECK (token >= 0))`);
  const update = `UPDATE ${table} SET n = n + 1 WHERE id = 1`;
  return {
    database: 'PostgreSQL (pg)',
    server: async () => (await pool.query('SHOW server_version')).rows[0].server_version,
    unfenced: async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(update);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
    fenced: async (token) => {
      await fencedPg(pool, { resource: 'bench', token }, (tx) => tx.query(update), { table: fences });
    },
    close: async () => {
      await pool.query(`DROP TABLE IF EXISTS ${table}, ${fences}`);
      await pool.end();
    },
    statements: { unfenced: 3, fenced: 4 },
  };
}

async function mariadb(): Promise<Target> {
  const pool = mysql.createPool({ uri: (await testMysql()).url, connectionLimit: 1 });
  const table = uniqueTable('bench_rows');
  const fences = uniqueTable('bench_fences');
  await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, n int NOT NULL) ENGINE=InnoDB`);
  await pool.query(`INSERT INTO ${table} VALUES (1, 0)`);
  await pool.query(`CREATE TABLE ${fences} (resource VARBINARY(1024) NOT NULL PRIMARY KEY, token BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB`);
  const update = `UPDATE ${table} SET n = n + 1 WHERE id = 1`;
  return {
    database: 'MySQL/MariaDB (mysql2)',
    server: async () => {
      const [rows] = await pool.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
      return String(rows[0]!.v);
    },
    unfenced: async () => {
      const connection = await pool.getConnection();
      try {
        await connection.query('START TRANSACTION');
        await connection.query(update);
        await connection.query('COMMIT');
      } finally {
        connection.release();
      }
    },
    fenced: async (token) => {
      await fencedMysql(pool, { resource: 'bench', token }, (tx) => tx.query(update), { table: fences });
    },
    close: async () => {
      await pool.query(`DROP TABLE IF EXISTS ${table}, ${fences}`);
      await pool.end();
    },
    statements: { unfenced: 3, fenced: 5 },
  };
}

async function measure(target: Target, sizes: Sizes, log: (line: string) => void): Promise<FenceBenchResult> {
  let token = 0;
  const time = async (run: () => Promise<void>) => {
    const start = process.hrtime.bigint();
    await run();
    return Number(process.hrtime.bigint() - start) / 1000;
  };
  for (let i = 0; i < sizes.warmupCycles; i++) {
    await target.unfenced();
    await target.fenced(++token);
  }
  const turn = Math.max(1, Math.ceil(sizes.cycles / 8));
  const rounds: { unfenced: number[]; fenced: number[] }[] = [];
  for (let round = 0; round < sizes.latencyRounds; round++) {
    const samples = { unfenced: [] as number[], fenced: [] as number[] };
    while (samples.fenced.length < sizes.cycles) {
      // Each round starts with the other variant, so neither always runs first.
      const order = round % 2 === 0 ? (['unfenced', 'fenced'] as const) : (['fenced', 'unfenced'] as const);
      for (const variant of order) {
        for (let i = 0; i < turn; i++) {
          samples[variant].push(await time(variant === 'fenced' ? () => target.fenced(++token) : () => target.unfenced()));
        }
      }
    }
    rounds.push(samples);
  }
  const p = (values: number[][]) => ({
    p50Us: median(values.map((v) => summarize(v).p50)),
    p99Us: median(values.map((v) => summarize(v).p99)),
  });
  const result: FenceBenchResult = {
    database: target.database,
    server: await target.server(),
    transactions: sizes.cycles,
    unfenced: p(rounds.map((r) => r.unfenced)),
    fenced: p(rounds.map((r) => r.fenced)),
    ratio: median(rounds.map((r) => summarize(r.fenced).p50 / summarize(r.unfenced).p50)),
    statements: target.statements,
  };
  log(
    `  ${result.database} ${result.server}: unfenced p50 ${result.unfenced.p50Us.toFixed(0)} µs, fenced p50 ` +
      `${result.fenced.p50Us.toFixed(0)} µs: ${result.ratio.toFixed(2)}× (${result.statements.fenced} statements vs ${result.statements.unfenced})`,
  );
  return result;
}

/** Both databases in turn; a database that cannot be reached is skipped with a note. */
export async function runFence(sizes: Sizes, log: (line: string) => void, notes: string[]): Promise<FenceBenchResult[]> {
  const results: FenceBenchResult[] = [];
  try {
    for (const open of [postgres, mariadb]) {
      let target: Target | undefined;
      try {
        target = await open();
        results.push(await measure(target, sizes, log));
      } catch (error) {
        notes.push(`Fence scenario (${open.name}) failed: ${error instanceof Error ? error.message : String(error)}`);
        log(`  ${open.name}: FAILED ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await target?.close();
      }
    }
  } finally {
    await stopSpawned();
  }
  return results;
}
