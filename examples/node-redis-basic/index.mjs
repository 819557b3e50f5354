// The README's node-redis quick start, runnable: holdfast on a client of the `redis` package,
// passed as it is, connected. holdfast never closes it: the example does, at the end.
import { createClient } from 'redis';
import { LockClient } from '@holdfast/core';
import { withRedis } from '../shared/redis.mjs';

// Your database, here a stand-in that prints what it is asked to run.
const db = { query: async (sql, params) => console.log(`db.query ${sql} ${JSON.stringify(params)}`) };

await withRedis(async (url) => {
  const redis = await createClient({ url }).connect();
  const locks = new LockClient(redis, { prefix: 'billing' });

  // Twice: each acquisition gets a fencing token greater than the last, so a database that keeps
  // the token of the last write (`fence < $1`) refuses a holder whose lease ran out meanwhile.
  for (let i = 0; i < 2; i++) {
    await locks.lock('invoice:42').withLock(async (lease) => {
      await db.query('UPDATE invoices SET paid = true, fence = $1 WHERE id = 42 AND fence < $1', [lease.token]);
    });
  }
  await locks.close();
  redis.destroy(); // holdfast never closes your client: until you do, Node keeps running
});
