import { LockClient } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import { startRedisServers, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedOffError } from '../src/errors.js';
import { postgresDriver, type Driver } from './drivers.js';
import { uniqueTable } from '@holdfast/test-utils/databases';

/**
 * The tokens of every holdfast primitive fence a resource as the README's table says (on
 * PostgreSQL: the database side is the same for every token, and semantics.test.ts holds both
 * databases to it).
 */
describe('tokens of every holdfast primitive', () => {
  let servers: RedisServer[];
  let locks: LockClient;
  let db: Driver;
  const table = uniqueTable();
  const options = { table };
  const fenced = (resource: string, token: number) => db.fenced({ resource, token }, async () => 'written', options);

  beforeAll(async () => {
    servers = await startRedisServers(3);
    locks = new LockClient(servers[0]!.client(), { prefix: 'fence-tokens' });
    db = await postgresDriver(2);
    await db.createFenceTable(options);
  });
  afterAll(async () => {
    await locks.close();
    await db.exec(`DROP TABLE IF EXISTS ${table}`);
    await db.close();
    await Promise.all(servers.map((server) => server.stop()));
  });

  it("read-write lock: a writer's token fences writes; a reader's is refused once a later writer committed", async () => {
    const doc = locks.readWriteLock('doc');
    const first = await doc.write.acquire();
    expect(await fenced('doc', first.token)).toBe('written');
    await first.release();
    const reader = await doc.read.acquire();
    // The read side checks that no write came after the read began: nothing has yet.
    expect(await fenced('doc', reader.token)).toBe('written');
    await reader.release();
    const second = await doc.write.acquire();
    expect(second.token).toBeGreaterThan(reader.token);
    expect(await fenced('doc', second.token)).toBe('written');
    await second.release();
    await expect(fenced('doc', reader.token)).rejects.toBeInstanceOf(FencedOffError);
  });

  it("multi-lock: each name's token, all in one transaction", async () => {
    const names = ['account:1', 'account:2'];
    const older = await locks.multiLock(names).acquire();
    await older.release();
    const newer = await locks.multiLock(names).acquire();
    const fences = (lease: typeof newer) => names.map((resource) => ({ resource, token: lease.tokens.get(resource)! }));
    expect(await db.fenced(fences(newer), async () => 'moved', options)).toBe('moved');
    await newer.release();
    await expect(db.fenced(fences(older), async () => 'moved', options)).rejects.toMatchObject({ code: 'ERR_FENCED_OFF' });
  });

  it("semaphore: a permit lease's token fences what that permit guards", async () => {
    const pool = locks.semaphore('slots', { permits: 2 });
    const first = await pool.acquire();
    await first.release();
    const second = await pool.acquire();
    expect(second.token).toBeGreaterThan(first.token);
    expect(await fenced('slots:slot:1', second.token)).toBe('written');
    await second.release();
    await expect(fenced('slots:slot:1', first.token)).rejects.toMatchObject({ token: first.token, currentToken: second.token });
  });

  it("Redlock: the quorum lease's token", async () => {
    const redlock = new Redlock(servers.map((server) => server.client()));
    try {
      const first = await redlock.lock('payout').acquire();
      await first.release();
      const second = await redlock.lock('payout').acquire();
      expect(await fenced('payout', second.token)).toBe('written');
      await second.release();
      await expect(fenced('payout', first.token)).rejects.toBeInstanceOf(FencedOffError);
    } finally {
      await redlock.close();
    }
  });
});
