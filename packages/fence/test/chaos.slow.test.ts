import { fileURLToPath } from 'node:url';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Driver } from './drivers.js';
import { startFixture, type Reporter } from './fixtures/lines.js';
import { uniqueTable } from '@holdfast/test-utils/databases';

const worker = fileURLToPath(new URL('./fixtures/chaos-worker.mjs', import.meta.url));
const WORKERS = 4;
/** Sections per worker: in the run with the nemesis, and in the control without the fence. */
const SECTIONS = 8;
const CONTROL_SECTIONS = 4;
const LEASE_MS = 100;
/** Nemesis rounds (a pause, a kill, a Redis restart in turn), 200 ms apart. */
const ROUNDS = 9;

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
interface Figures {
  sections: number;
  overlappingSections: number;
  committed: number;
  staleRejected: number;
  staleAccepted: number;
  logged: number;
  reportedCommitted: number;
  errors: Section[];
  fencedOffBelowCurrent: boolean;
  paused: number;
  killed: number;
  redisRestarts: number;
  exitCodes: (number | null)[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One run: fresh tables, WORKERS workers of `sections` sections each (a killed one is replaced), the nemesis when asked. */
async function chaosRun(db: Driver, redis: RedisServer, options: { unfenced: boolean; nemesis: boolean; sections: number }): Promise<Figures> {
  const table = uniqueTable();
  const data = uniqueTable('counter');
  const log = uniqueTable('log');
  await db.createFenceTable({ table });
  await db.exec(`CREATE TABLE ${data} (id INT PRIMARY KEY, n INT NOT NULL, max_token BIGINT NOT NULL, below INT NOT NULL)`);
  await db.exec(`INSERT INTO ${data} (id, n, max_token, below) VALUES (1, 0, 0, 0)`);
  await db.exec(`CREATE TABLE ${log} (token BIGINT NOT NULL)`);
  try {
    const env = {
      DB_KIND: db.name === 'postgres' ? 'pg' : 'mysql',
      DB_URL: db.url,
      REDIS_URL: redis.url,
      FENCE_TABLE: table,
      DATA_TABLE: data,
      LOG_TABLE: log,
      LEASE_MS: String(LEASE_MS),
      SECTIONS: String(options.sections),
      UNFENCED: options.unfenced ? '1' : '0',
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
    for (let round = 0; options.nemesis && round < ROUNDS; round++) {
      await sleep(200);
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
    const exitCodes = await Promise.all(all.map((reporter) => reporter.exited));
    const [counter] = await db.exec(`SELECT n, below FROM ${data} WHERE id = 1`);
    const [{ logged }] = (await db.exec(`SELECT COUNT(*) AS logged FROM ${log}`)) as [{ logged: unknown }];
    const fencedOff = sections.filter((s) => s.outcome === 'fenced off');
    return {
      sections: sections.length,
      overlappingSections: overlaps(sections),
      committed: Number(counter!.n),
      staleRejected: fencedOff.length,
      staleAccepted: Number(counter!.below),
      logged: Number(logged),
      reportedCommitted: sections.filter((s) => s.outcome === 'committed').length,
      errors: sections.filter((s) => s.outcome === 'error'),
      fencedOffBelowCurrent: fencedOff.every((s) => s.currentToken! > s.token),
      ...faults,
      exitCodes,
    };
  } finally {
    for (const name of [table, data, log]) await db.exec(`DROP TABLE IF EXISTS ${name}`);
  }
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

  beforeAll(async () => {
    redis = await startRedis({ persistent: true });
    db = await DRIVERS[name](2);
  });
  afterAll(async () => {
    await db.close();
    await redis.stop();
  });

  it('never accepts a write below a committed token, and counts every committed transaction once', async () => {
    const figures = await chaosRun(db, redis, { unfenced: false, nemesis: true, sections: SECTIONS });
    const { errors, exitCodes, ...shown } = figures;
    console.log(`chaos ${name}: ${JSON.stringify(shown)}`);
    expect(exitCodes.filter((code) => code !== 0 && code !== null)).toEqual([]);
    expect(errors).toEqual([]);
    expect(figures.staleAccepted).toBe(0);
    expect(figures.logged).toBe(figures.committed);
    // A killed worker may have committed without reporting it: never the other way round.
    expect(figures.committed).toBeGreaterThanOrEqual(figures.reportedCommitted);
    expect(figures.fencedOffBelowCurrent).toBe(true);
    // The run did what it is for: sections overlapped, and stale writes were refused.
    expect(figures.overlappingSections).toBeGreaterThan(0);
    expect(figures.staleRejected).toBeGreaterThan(0);
    expect(Math.min(figures.paused, figures.killed, figures.redisRestarts)).toBeGreaterThan(0);
  }, 60_000);

  it('control: the same workers without the fence get stale writes accepted, and the counter row says so', async () => {
    const figures = await chaosRun(db, redis, { unfenced: true, nemesis: false, sections: CONTROL_SECTIONS });
    console.log(`chaos ${name}, unfenced control: overlapping ${figures.overlappingSections}, stale accepted ${figures.staleAccepted}`);
    expect(figures.errors).toEqual([]);
    expect(figures.staleAccepted).toBeGreaterThan(0);
    expect(figures.logged).toBe(figures.committed);
  }, 60_000);
});
