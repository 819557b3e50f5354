import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOffError } from '../src/errors.js';
import { DRIVERS, type Driver } from './drivers.js';
import { uniqueTable } from '@holdfast/test-utils/databases';

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * Many writers at once, each database: the committed tokens of a resource never go down (the
 * database itself counts any write whose token is below one already committed), and fenced
 * transactions over overlapping sets of resources, given in any order, never deadlock.
 */
describe.each(Object.keys(DRIVERS) as (keyof typeof DRIVERS)[])('concurrent fenced transactions on %s', (name) => {
  let db: Driver;
  const table = uniqueTable();
  const counters = uniqueTable('counters');
  const options = { table };

  beforeAll(async () => {
    db = await DRIVERS[name](8);
    await db.createFenceTable(options);
    await db.exec(`CREATE TABLE ${counters} (id VARCHAR(32) PRIMARY KEY, n INT NOT NULL, max_token BIGINT NOT NULL, below INT NOT NULL)`);
  });
  afterAll(async () => {
    await db.exec(`DROP TABLE IF EXISTS ${table}`);
    await db.exec(`DROP TABLE IF EXISTS ${counters}`);
    await db.close();
  });

  /** The write every test does: counts it, and counts it again in `below` if a greater token committed before. */
  const bump = (exec: (sql: string, params?: unknown[]) => Promise<unknown>, id: string, token: number) =>
    exec(
      `UPDATE ${counters} SET below = below + CASE WHEN max_token > ? THEN 1 ELSE 0 END, ` +
        'max_token = GREATEST(max_token, ?), n = n + 1 WHERE id = ?',
      [token, token, id],
    );
  const counter = async (id: string) => (await db.exec(`SELECT n, max_token, below FROM ${counters} WHERE id = ?`, [id]))[0]!;

  it('60 writers of one resource with tokens in random order: no write below a committed token', async () => {
    await db.exec(`INSERT INTO ${counters} (id, n, max_token, below) VALUES ('one', 0, 0, 0)`);
    const outcomes = await Promise.all(
      shuffle(Array.from({ length: 60 }, (_, i) => i + 1)).map((token) =>
        db.fenced({ resource: 'one', token }, (exec) => bump(exec, 'one', token), options).then(
          () => 'committed' as const,
          (error: unknown) => {
            if (error instanceof FencedOffError && error.currentToken > token) return 'fenced off' as const;
            throw error;
          },
        ),
      ),
    );
    const committed = outcomes.filter((outcome) => outcome === 'committed').length;
    expect(await counter('one')).toEqual({ n: committed, max_token: name === 'postgres' ? '60' : 60, below: 0 });
    expect(await db.lastToken('one', options)).toBe(60);
  });

  it('80 transactions over random sets of 3 of 6 resources, given in random order: none deadlocks', async () => {
    const ids = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5'];
    for (const id of ids) await db.exec(`INSERT INTO ${counters} (id, n, max_token, below) VALUES (?, 0, 0, 0)`, [id]);
    let next = 0;
    const outcomes = await Promise.all(
      Array.from({ length: 80 }, async () => {
        const token = ++next;
        const mine = shuffle([...ids]).slice(0, 3);
        // Written in the order given, not the fences' order: the fence rows already serialise them.
        return db
          .fenced(
            mine.map((resource) => ({ resource, token })),
            async (exec) => {
              for (const id of mine) await bump(exec, id, token);
            },
            options,
          )
          .then(
            () => 'committed',
            (error: unknown) => (error instanceof FencedOffError ? 'fenced off' : error),
          );
      }),
    );
    expect(outcomes.filter((outcome) => outcome !== 'committed' && outcome !== 'fenced off')).toEqual([]);
    const rows = await Promise.all(ids.map(counter));
    expect(rows.map((row) => Number(row.below))).toEqual([0, 0, 0, 0, 0, 0]);
    const committed = outcomes.filter((outcome) => outcome === 'committed').length;
    expect(rows.reduce((sum, row) => sum + Number(row.n), 0)).toBe(committed * 3);
  });
});
