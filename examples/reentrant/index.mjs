// Reentrancy follows the async chain: nested calls re-enter, sibling tasks wait.
import { LockClient } from '@holdfast/core';
import { connect, printEvents, withRedis } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const locks = new LockClient(redis, { prefix: 'example' });
  printEvents(locks);
  const account = locks.lock('account:7');

  async function debit(amount) {
    // Called both on its own and from inside transfer(): re-enters when nested.
    return account.withLock(async (lease) => {
      console.log(`  debit ${amount}: holdCount ${lease.holdCount}, token ${lease.token}`);
      await sleep(10);
    });
  }

  async function transfer(amount) {
    await account.withLock(async (lease) => {
      console.log(`transfer ${amount}: holdCount ${lease.holdCount}`);
      await debit(amount);
      await sleep(5).then(() => debit(1)); // still the same chain after awaits and timers
    });
  }

  console.log('two transfers started at once exclude each other:');
  await Promise.all([transfer(100), transfer(200)]);
  console.log('locked after both?', await account.isLocked());
  await locks.close();
  redis.disconnect();
});
