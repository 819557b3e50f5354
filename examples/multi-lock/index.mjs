// Multi-lock: a transfer holds both accounts, all or none, and two opposite transfers never deadlock.
import { LockClient } from '@holdfast/core';
import { connect, printEvents, withRedis } from '../shared/redis.mjs';

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const bank = new LockClient(redis, { prefix: 'example' });
  const audit = new LockClient(redis, { prefix: 'example' });
  printEvents(bank, 'bank');
  const balances = new Map([['account:1', 100], ['account:2', 100]]);

  async function transfer(from, to, amount) {
    await bank.multiLock([from, to]).withLock(async (lease) => {
      // One fencing token per account: a store can reject writes of a stale holder per row.
      console.log(`transfer ${from} -> ${to} holds tokens ${JSON.stringify([...lease.tokens])}`);
      balances.set(from, balances.get(from) - amount);
      await new Promise((resolve) => setTimeout(resolve, 10));
      balances.set(to, balances.get(to) + amount);
    });
  }

  // Opposite orders, at once: the names are always taken in one global order, so both finish.
  await Promise.all([transfer('account:1', 'account:2', 30), transfer('account:2', 'account:1', 10)]);
  console.log(`balances: ${JSON.stringify([...balances])} (total ${[...balances.values()].reduce((a, b) => a + b)})`);

  // All or none: with account:2 busy, tryAcquire holds nothing, not even account:1.
  const plain = await audit.lock('account:2').acquire();
  const attempt = await bank.multiLock(['account:1', 'account:2']).tryAcquire();
  console.log(`tryAcquire while account:2 is audited: ${attempt}; account:1 locked? ${await bank.lock('account:1').isLocked()}`);
  await plain.release();

  await bank.close();
  await audit.close();
  redis.disconnect();
});
