// Fencing: a holder paused past its lease cannot overwrite the work of the next holder.
import { LockClient, fencedWrite, readFenced } from '@holdfast/core';
import { connect, printEvents, withRedis } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const slow = new LockClient(redis, { prefix: 'example' });
  const fast = new LockClient(redis, { prefix: 'example' });
  printEvents(slow, 'slow');
  printEvents(fast, 'fast');
  const resource = 'example:doc:1';
  await redis.del(resource);

  const stale = await slow.lock('doc:1').acquire({ leaseMs: 200 });
  console.log(`slow holds token ${stale.token} and pauses for 400 ms (a GC pause, say)`);
  stale.signal.addEventListener('abort', () => console.log(`slow's lease.signal aborted: ${stale.signal.reason.message}`));
  await sleep(400);

  await fast.lock('doc:1').withLock(async (lease) => {
    const ok = await fencedWrite(redis, resource, lease.token, 'written by fast');
    console.log(`fast writes with token ${lease.token}: ${ok ? 'accepted' : 'rejected'}`);
  });

  const late = await fencedWrite(redis, resource, stale.token, 'late write by slow');
  console.log(`slow wakes up and writes with token ${stale.token}: ${late ? 'accepted' : 'rejected as stale'}`);
  console.log('resource now:', await readFenced(redis, resource));
  console.log('SQL equivalent: UPDATE docs SET body = $2, fence = $3 WHERE id = $1 AND fence < $3');

  await slow.close();
  await fast.close();
  redis.disconnect();
});
