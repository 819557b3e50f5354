// The holder index.mjs freezes: takes invoice:42 with a 300 ms lease, says so (one JSON line),
// then waits for a line on stdin before its write. index.mjs writes that line while the holder
// is frozen (SIGSTOP), so the write happens only after it resumes, long after its lease ran out.
import { once } from 'node:events';
import pg from 'pg';
import { LockClient } from '@holdfast/core';
import { fencedTransaction } from '@holdfast/fence/pg';
import { connect } from '../shared/redis.mjs';

const { REDIS_URL, PG_URL, FENCE_TABLE, INVOICES } = process.env;
const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
const redis = await connect(REDIS_URL);
const locks = new LockClient(redis, { prefix: 'example-fence' });

const lease = await locks.lock('invoice:42').acquire({ leaseMs: 300 });
console.log(JSON.stringify({ token: lease.token }));
process.stdin.setEncoding('utf8');
await once(process.stdin, 'data');
try {
  await fencedTransaction(pool, { resource: 'invoice:42', token: lease.token }, (tx) =>
    tx.query(`UPDATE ${INVOICES} SET paid_by = $1 WHERE id = 42`, ['holder']), { table: FENCE_TABLE });
  console.log(JSON.stringify({ committed: true }));
} catch (error) {
  console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message }));
}
process.stdin.destroy();
await locks.close();
redis.disconnect();
await pool.end();
