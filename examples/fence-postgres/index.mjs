// Fencing at the resource: a lock holder frozen past its lease (SIGSTOP: a GC pause, a frozen
// VM) wakes up after a rival took the lock and wrote; PostgreSQL refuses its write.
// PostgreSQL: PG_URL, or the local server (postgres://postgres@127.0.0.1:5432/test).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { LockClient } from '@holdfast/core';
import { createFenceTable, fencedTransaction, lastToken } from '@holdfast/fence/pg';
import { connect, fail, withRedis } from '../shared/redis.mjs';

const PG_URL = process.env.PG_URL || 'postgres://postgres@127.0.0.1:5432/test';
const FENCE_TABLE = 'holdfast_example_fences';
const INVOICES = 'holdfast_example_invoices';

const pool = new pg.Pool({ connectionString: PG_URL, max: 2, connectionTimeoutMillis: 5_000 });
await pool.query('SELECT 1').catch(async (error) => {
  await pool.end();
  fail(`cannot reach PostgreSQL at ${PG_URL} (${error.message}): start it (Debian: apt-get install postgresql) or set PG_URL`);
});
await createFenceTable(pool, { table: FENCE_TABLE });
await pool.query(`CREATE TABLE IF NOT EXISTS ${INVOICES} (id int PRIMARY KEY, paid_by text)`);
await pool.query(`INSERT INTO ${INVOICES} (id, paid_by) VALUES (42, NULL) ON CONFLICT (id) DO UPDATE SET paid_by = NULL`);
// A fresh Redis starts tokens at 1 again: forget the fence of an earlier run.
await pool.query(`DELETE FROM ${FENCE_TABLE} WHERE resource = 'invoice:42'`);

try {
  await withRedis(async (url) => {
    const holder = spawn(process.execPath, ['holder.mjs'], {
      cwd: import.meta.dirname,
      env: { ...process.env, REDIS_URL: url, PG_URL, FENCE_TABLE, INVOICES },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: holder.stdout })[Symbol.asyncIterator]();
    const next = async () => JSON.parse((await lines.next()).value);

    const { token } = await next();
    console.log(`holder (pid ${holder.pid}) holds invoice:42 with token ${token}, lease 300 ms`);
    holder.kill('SIGSTOP');
    console.log('holder frozen (SIGSTOP) before its write');
    holder.stdin.write('go\n'); // read once it runs again

    const redis = await connect(url);
    const locks = new LockClient(redis, { prefix: 'example-fence' });
    await locks.lock('invoice:42').withLock(async (lease) => {
      console.log(`rival gets invoice:42 once the holder's lease ran out: token ${lease.token}`);
      await fencedTransaction(pool, { resource: 'invoice:42', token: lease.token }, (tx) =>
        tx.query(`UPDATE ${INVOICES} SET paid_by = $1 WHERE id = 42`, ['rival']), { table: FENCE_TABLE });
      console.log('rival: fenced write committed');
    }, { waitMs: 10_000 });

    holder.kill('SIGCONT');
    console.log('holder resumes and writes with its old token');
    const outcome = await next();
    console.log(outcome.committed ? 'holder: write committed (fencing failed!)' : `holder: ${outcome.name} (${outcome.code}): ${outcome.message}`);
    await once(holder, 'exit');

    const { rows } = await pool.query(`SELECT paid_by FROM ${INVOICES} WHERE id = 42`);
    console.log(`invoice 42 paid_by ${rows[0].paid_by}; stored token ${await lastToken(pool, 'invoice:42', { table: FENCE_TABLE })}`);
    await locks.close();
    redis.disconnect();
  });
} finally {
  await pool.query(`DROP TABLE IF EXISTS ${INVOICES}, ${FENCE_TABLE}`);
  await pool.end();
}
