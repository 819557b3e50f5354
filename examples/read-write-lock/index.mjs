// A read-write lock: readers share, a writer holds alone, a queued writer holds back later
// readers, and tokens let the resource reject a reader's decision made before a later write.
import { LockClient, LockUpgradeError } from '@holdfast/core';
import { connect, listLength, withRedis } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const locks = new LockClient(redis, { prefix: 'example' });
  locks.on('acquired', (e) => console.log(`  acquired ${e.kind} token ${e.token}${e.reentrant ? ' (re-entry)' : ''}`));
  locks.on('released', (e) => e.holdCount === 0 && console.log(`  released ${e.kind}`));
  const doc = locks.readWriteLock('doc:42');
  const queued = async (n) => {
    while ((await listLength(redis, doc.write.keys.queue)) < n) await sleep(5);
  };
  let content = 'v1';
  let lastWriteToken = 0;

  console.log('three readers at once share the lock:');
  let inside = 0;
  let most = 0;
  await Promise.all(
    ['ann', 'bob', 'cat'].map((who) =>
      doc.read.withLock(async (lease) => {
        most = Math.max(most, ++inside);
        await sleep(30);
        inside--;
        console.log(`  [${who}] read ${content} with token ${lease.token}`);
      }),
    ),
  );
  console.log(`readers inside at once: ${most}`);

  console.log('a writer queued behind a reader holds back the reader after it:');
  const early = await doc.read.acquire();
  const order = [];
  const writer = doc.write.withLock(async (lease) => {
    order.push('writer');
    content = 'v2';
    lastWriteToken = lease.token;
  });
  await queued(1); // the writer waits in the lock's queue
  const late = doc.read.withLock(async () => order.push('late reader'));
  await queued(2); // and the late reader behind it
  console.log(`  before the early reader leaves: ${JSON.stringify(order)}`);
  await early.release();
  await Promise.all([writer, late]);
  console.log(`  order: ${order.join(' then ')}`);

  // The early reader's token predates the write: the resource can tell its decision is stale.
  const verdict = early.token < lastWriteToken ? 'rejected as stale' : 'accepted';
  console.log(`early reader's decision (token ${early.token}, last write ${lastWriteToken}): ${verdict}`);

  console.log('a writer may read inside its write (downgrade); a reader may not write:');
  await doc.write.withLock(async () => {
    const read = await doc.read.acquire();
    console.log(`  downgraded read held: ${read.isHeld}`);
    await read.release();
  });
  await doc.read.withLock(async () => {
    const error = await doc.write.acquire().catch((e) => e);
    console.log(`  write inside read: ${error instanceof LockUpgradeError ? error.code : 'granted?!'}`);
  });
  console.log('locked now?', (await doc.read.isLocked()) || (await doc.write.isLocked()));
  await locks.close();
  redis.disconnect();
});
