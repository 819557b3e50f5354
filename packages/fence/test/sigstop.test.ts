import { fileURLToPath } from 'node:url';
import { LockClient } from '@holdfast/core';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Driver } from './drivers.js';
import { startFixture } from './fixtures/lines.js';
import { uniqueTable } from '@holdfast/test-utils/databases';

const holder = fileURLToPath(new URL('./fixtures/holder.mjs', import.meta.url));

/**
 * The whole safety argument, end to end, on each database: a holder takes the lock, is frozen
 * (SIGSTOP) past its lease, a rival takes the lock and commits a write, the holder resumes and
 * writes with its old token: the database refuses it with FencedOffError.
 */
describe.each([
  ['postgres', 'pg'],
  ['mariadb', 'mysql'],
] as const)('a holder frozen past its lease, on %s', (name, kind) => {
  let redis: RedisServer;
  let db: Driver;
  const table = uniqueTable();
  const data = uniqueTable('data');

  beforeAll(async () => {
    redis = await startRedis();
    db = await DRIVERS[name](2);
    await db.createFenceTable({ table });
    await db.exec(`CREATE TABLE ${data} (id INT PRIMARY KEY, v VARCHAR(32))`);
    await db.exec(`INSERT INTO ${data} (id, v) VALUES (1, 'initial')`);
  });
  afterAll(async () => {
    await db.exec(`DROP TABLE IF EXISTS ${table}`);
    await db.exec(`DROP TABLE IF EXISTS ${data}`);
    await db.close();
    await redis.stop();
  });

  it("is refused by the database once the rival's write committed", async () => {
    const lockName = `invoice:${kind}`;
    const frozen = startFixture(holder, {
      DB_KIND: kind,
      DB_URL: db.url,
      REDIS_URL: redis.url,
      FENCE_TABLE: table,
      DATA_TABLE: data,
      LOCK_NAME: lockName,
    });
    const { acquired } = (await frozen.next()) as { acquired: number };
    frozen.child.kill('SIGSTOP');
    // Read by the holder only once it runs again: its write comes after the rival's.
    frozen.child.stdin!.write('go\n');

    const client = redis.client();
    const locks = new LockClient(client, { prefix: 'fence-e2e' });
    try {
      // Free only because the frozen holder's lease ran out on the server.
      const rival = await locks.lock(lockName).acquire({ waitMs: 20_000, leaseMs: 10_000 });
      expect(rival.token).toBeGreaterThan(acquired);
      await db.fenced({ resource: lockName, token: rival.token }, (exec) => exec(`UPDATE ${data} SET v = ? WHERE id = 1`, ['rival']), { table });
      frozen.child.kill('SIGCONT');
      const outcome = await frozen.next();
      expect(outcome).toMatchObject({ error: 'FencedOffError', code: 'ERR_FENCED_OFF', token: acquired, currentToken: rival.token });
      expect(await frozen.exited).toBe(0);
      expect(await db.exec(`SELECT v FROM ${data} WHERE id = 1`)).toEqual([{ v: 'rival' }]);
      expect(await db.lastToken(lockName, { table })).toBe(rival.token);
      await rival.release();
    } finally {
      frozen.child.kill('SIGKILL');
      await locks.close();
    }
  });
});
