import { fileURLToPath } from 'node:url';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Driver } from './drivers.js';
import { startFixture, type Reporter } from './fixtures/lines.js';
import { uniqueTable } from './harness/databases.js';

const worker = fileURLToPath(new URL('./fixtures/chaos-worker.mjs', import.meta.url));
const WORKERS = 4;
const RUN_MS = 4_000;
const LEASE_MS = 100;

interface Section {
  token: number;
  start: number;
  end: number;
  outcome: 'committed' | 'fenced off' | 'error';
  currentToken?: number;
}

/** Pairs of sections of different tokens that ran at the same time: the lock's exclusion broken. */
function overlaps(sections: Section[]): number {
  const sorted = [...sections].sort((a, b) => a.start - b.start);
  let count = 0;
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]!.start < sorted[i]!.end; j++) {
      if (sorted[j]!.token !== sorted[i]!.token) count++;
    }
  }
  return count;
}

/**
 * Several worker processes increment a counter row under one lock, in fenced transactions, while
 * a nemesis freezes them (SIGSTOP), kills them (SIGKILL, a new worker takes the place) and
 * restarts Redis (from its AOF, so tokens keep increasing). Leases are short and every third
 * holder pauses past its lease, so sections overlap on purpose. The database is the judge: the
 * counter row counts, under its own row lock, every write whose token is below one committed
 * before (`below`), and the log table holds one row per committed transaction.
 */
describe.each(['postgres', 'mariadb'] as const)('chaos run on %s', (name) => {
  let redis: RedisServer;
  let db: Driver;
  const table = uniqueTable();
  const data = uniqueTable('counter');
  const log = uniqueTable('log');

  beforeAll(async () => {
    redis = await startRedis({ persistent: true });
    db = await DRIVERS[name](2);
    await db.createFenceTable({ table });
    await db.exec(`CREATE TABLE ${data} (id INT PRIMARY KEY, n INT NOT NULL, max_token BIGINT NOT NULL, below INT NOT NULL)`);
    await db.exec(`INSERT INTO ${data} (id, n, max_token, below) VALUES (1, 0, 0, 0)`);
    await db.exec(`CREATE TABLE ${log} (token BIGINT NOT NULL)`);
  });
  afterAll(async () => {
    for (const name_ of [table, data, log]) await db.exec(`DROP TABLE IF EXISTS ${name_}`);
    await db.close();
    await redis.stop();
  });

  it('never accepts a write below a committed token, and counts every committed transaction once', async () => {
    const runUntil = Date.now() + RUN_MS;
    const env = {
      DB_KIND: name === 'postgres' ? 'pg' : 'mysql',
      DB_URL: db.url,
      REDIS_URL: redis.url,
      FENCE_TABLE: table,
      DATA_TABLE: data,
      LOG_TABLE: log,
      LEASE_MS: String(LEASE_MS),
      RUN_UNTIL: String(runUntil),
    };
    const sections: Section[] = [];
    const all: Reporter[] = [];
    const start = () => {
      const reporter = startFixture(worker, env);
      all.push(reporter);
      void (async () => {
        for (;;) sections.push((await reporter.next()) as unknown as Section);
      })().catch(() => {}); // ends when the worker exits
      return reporter;
    };
    const workers = Array.from({ length: WORKERS }, start);
    const faults = { paused: 0, killed: 0, redisRestarts: 0 };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    for (let round = 0; Date.now() < runUntil - 500; round++) {
      await sleep(250);
      const victim = round % WORKERS;
      switch (round % 3) {
        case 0: {
          workers[victim]!.child.kill('SIGSTOP');
          await sleep(LEASE_MS * 3);
          workers[victim]!.child.kill('SIGCONT');
          faults.paused++;
          break;
        }
        case 1: {
          workers[victim]!.child.kill('SIGKILL');
          workers[victim] = start();
          faults.killed++;
          break;
        }
        default: {
          await redis.restart();
          faults.redisRestarts++;
        }
      }
    }
    const codes = await Promise.all(all.map((reporter) => reporter.exited));
    expect(codes.filter((code) => code !== 0 && code !== null)).toEqual([]);

    const [counter] = await db.exec(`SELECT n, below FROM ${data} WHERE id = 1`);
    const [{ logged }] = (await db.exec(`SELECT COUNT(*) AS logged FROM ${log}`)) as [{ logged: unknown }];
    const committed = sections.filter((s) => s.outcome === 'committed');
    const fencedOff = sections.filter((s) => s.outcome === 'fenced off');
    const figures = {
      sections: sections.length,
      overlappingSections: overlaps(sections),
      committed: Number(counter!.n),
      staleRejected: fencedOff.length,
      staleAccepted: Number(counter!.below),
      ...faults,
    };
    console.log(`chaos ${name}: ${JSON.stringify(figures)}`);
    expect(sections.filter((s) => s.outcome === 'error')).toEqual([]);
    expect(figures.staleAccepted).toBe(0);
    expect(Number(logged)).toBe(figures.committed);
    // A killed worker may have committed without reporting it: never the other way round.
    expect(figures.committed).toBeGreaterThanOrEqual(committed.length);
    expect(fencedOff.every((s) => s.currentToken! > s.token)).toBe(true);
    // The run did what it is for: sections overlapped, and stale writes were refused.
    expect(figures.overlappingSections).toBeGreaterThan(0);
    expect(figures.staleRejected).toBeGreaterThan(0);
    expect(Math.min(faults.paused, faults.killed, faults.redisRestarts)).toBeGreaterThan(0);
  }, 60_000);
});
