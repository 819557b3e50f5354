import { HoldfastError } from '@holdfast/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOffError } from '../src/errors.js';
import { DRIVERS, type Driver } from './drivers.js';
import { uniqueTable } from '@holdfast/test-utils/databases';

/** What a fenced transaction guarantees, on each database (the same promises, asserted on both). */
describe.each(Object.keys(DRIVERS) as (keyof typeof DRIVERS)[])('fencedTransaction on %s', (name) => {
  let db: Driver;
  const table = uniqueTable();
  const data = uniqueTable('data');
  const options = { table };
  const fenced = <T>(fences: Parameters<Driver['fenced']>[0], fn: Parameters<Driver['fenced']>[1]) =>
    db.fenced(fences, fn as never, options) as Promise<T>;
  const valueOf = async (id: string) => (await db.exec(`SELECT v FROM ${data} WHERE id = ?`, [id]))[0]?.v ?? null;
  const write = (id: string, v: string) => (exec: (sql: string, params?: unknown[]) => Promise<unknown>) =>
    exec(`INSERT INTO ${data} (id, v) VALUES (?, ?)`, [id, v]);

  beforeAll(async () => {
    db = await DRIVERS[name](2);
    await db.createFenceTable(options);
    await db.exec(`CREATE TABLE ${data} (id VARCHAR(64) PRIMARY KEY, v VARCHAR(64))`);
  });
  afterAll(async () => {
    await db.exec(`DROP TABLE IF EXISTS ${table}`);
    await db.exec(`DROP TABLE IF EXISTS ${data}`);
    await db.close();
  });

  it('createFenceTable is idempotent; lastToken is null before any write', async () => {
    await db.createFenceTable(options);
    await db.createFenceTable(options);
    expect(await db.lastToken('never-written', options)).toBeNull();
  });

  it("commits fn's writes, resolves to fn's result and stores the token", async () => {
    const result = await fenced({ resource: 'r1', token: 7 }, async (exec) => {
      await write('a', 'one')(exec);
      return { done: true };
    });
    expect(result).toEqual({ done: true });
    expect(await valueOf('a')).toBe('one');
    expect(await db.lastToken('r1', options)).toBe(7);
  });

  it('passes an equal token (the same holder again) and a greater one', async () => {
    await fenced({ resource: 'r2', token: 3 }, async () => {});
    await fenced({ resource: 'r2', token: 3 }, write('b', 'again'));
    await fenced({ resource: 'r2', token: 9 }, async () => {});
    expect(await valueOf('b')).toBe('again');
    expect(await db.lastToken('r2', options)).toBe(9);
  });

  it('refuses a smaller token with FencedOffError before fn runs, committing nothing', async () => {
    await fenced({ resource: 'r3', token: 10 }, async () => {});
    let ran = false;
    const error = await fenced({ resource: 'r3', token: 4 }, async (exec) => {
      ran = true;
      await write('c', 'stale')(exec);
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FencedOffError);
    expect(error).toBeInstanceOf(HoldfastError);
    expect(error).toMatchObject({ code: 'ERR_FENCED_OFF', resource: 'r3', token: 4, currentToken: 10 });
    expect((error as Error).message).toBe(
      'Resource `r3` refused token 4: a holder with token 10 already wrote it (this holder lost its lock; the transaction was rolled back)',
    );
    expect(ran).toBe(false);
    expect(await valueOf('c')).toBeNull();
    expect(await db.lastToken('r3', options)).toBe(10);
  });

  it("rejects with fn's own error object after rolling back its writes and the fence", async () => {
    const thrown = new Error('boom');
    const error = await fenced({ resource: 'r4', token: 5 }, async (exec) => {
      await write('d', 'rolled back')(exec);
      throw thrown;
    }).catch((e: unknown) => e);
    expect(error).toBe(thrown);
    expect(await valueOf('d')).toBeNull();
    expect(await db.lastToken('r4', options)).toBeNull();
  });

  it("passes the database's own error through, as the driver raised it", async () => {
    let raised: unknown;
    const error = await fenced({ resource: 'r5', token: 1 }, async (exec) => {
      await exec(`SELECT * FROM ${table}_missing`).catch((e: unknown) => {
        raised = e;
        throw e;
      });
    }).catch((e: unknown) => e);
    expect(raised).toBeInstanceOf(Error);
    expect(error).toBe(raised);
    expect((error as { code: string }).code).toBe(name === 'postgres' ? '42P01' : 'ER_NO_SUCH_TABLE');
  });

  it('accepts token 0 (a reader before any write), and 0 again', async () => {
    await fenced({ resource: 'r6', token: 0 }, async () => {});
    await fenced({ resource: 'r6', token: 0 }, async () => {});
    expect(await db.lastToken('r6', options)).toBe(0);
  });

  it('fences several resources in one transaction: one stale resource refuses the whole of it', async () => {
    await fenced({ resource: 'm:b', token: 20 }, async () => {});
    const error = await fenced(
      [
        { resource: 'm:c', token: 15 },
        { resource: 'm:b', token: 15 },
        { resource: 'm:a', token: 15 },
      ],
      write('e', 'multi'),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ERR_FENCED_OFF', resource: 'm:b', token: 15, currentToken: 20 });
    expect(await valueOf('e')).toBeNull();
    // m:a was raised (it comes first) and rolled back with the rest; m:c was never reached.
    expect(await db.lastToken('m:a', options)).toBeNull();
    expect(await db.lastToken('m:c', options)).toBeNull();
    await fenced(
      [
        { resource: 'm:c', token: 21 },
        { resource: 'm:b', token: 21 },
      ],
      write('e', 'multi'),
    );
    expect([await db.lastToken('m:b', options), await db.lastToken('m:c', options), await valueOf('e')]).toEqual([21, 21, 'multi']);
  });

  it('keeps resources apart, byte for byte (case, trailing spaces, non-ASCII)', async () => {
    const names = ['Case', 'case', 'case ', 'café', 'cafe\u0301'];
    for (const [i, resource] of names.entries()) await fenced({ resource, token: 100 - i }, async () => {});
    expect(await Promise.all(names.map((resource) => db.lastToken(resource, options)))).toEqual([100, 99, 98, 97, 96]);
  });

  it('always gives the pooled connection back: after commits, stale tokens, fn errors and database errors', async () => {
    const before = db.poolCounts();
    for (let i = 0; i < 3; i++) {
      await fenced({ resource: 'p', token: 50 }, async () => {});
      await fenced({ resource: 'p', token: 1 }, async () => {}).catch(() => {});
      await fenced({ resource: 'p', token: 50 }, async () => Promise.reject(new Error('x'))).catch(() => {});
      await fenced({ resource: 'p', token: 50 }, (exec) => exec('SELECT nonsense FROM nowhere')).catch(() => {});
    }
    const after = db.poolCounts();
    expect(after.idle).toBe(after.total);
    expect(after.total).toBeLessThanOrEqual(2);
    expect(before.total).toBeLessThanOrEqual(after.total);
  });
});
