// A count-down latch and a cyclic barrier: three importers count a latch down while a reporter
// waits for all of them (woken by the last count-down over pub/sub, no polling); then four
// workers meet at a barrier twice (two generations); then, with three of the four waiting, one of
// them crashes: the other two get BarrierBrokenError within its lease and 1 s, and never hang.
import { BarrierBrokenError, LockClient } from '@holdfast/core';
import { connect, withRedis } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const locks = new LockClient(redis, { prefix: 'example' });

  // The latch: armed with 3; a previous run left it at 0 (or it expired), so this sets it.
  const latch = locks.countDownLatch('import-42', { ttlMs: 60_000 });
  await latch.delete(); // a run stopped half-way must not leave it counting
  console.log('armed:', await latch.trySetCount(3));
  const reporter = latch.wait({ waitMs: 10_000 }).then(() => console.log('reporter: all 3 imports done'));
  for (const part of [1, 2, 3]) {
    await sleep(30);
    console.log(`importer ${part} done, count now ${await latch.countDown()}`);
  }
  await reporter;

  // The barrier: 4 parties, each on a client of its own, as separate processes would be.
  const clients = [1, 2, 3, 4].map(() => new LockClient(redis, { prefix: 'example' }));
  const stage = (c) => c.barrier('stage-2', { parties: 4 });
  await stage(locks).setParties(4); // a previous run with another count must not refuse this one
  for (let round = 1; round <= 2; round++) {
    const arrivals = clients.map(async (c, i) => {
      await sleep(20 * i);
      const { generation } = await stage(c).arrive({ waitMs: 10_000 });
      return `worker ${i + 1} through generation ${generation}`;
    });
    console.log((await Promise.all(arrivals)).join('; '));
  }

  // A worker whose process dies while the others wait (its client closes without a word, and
  // its connection goes): its lease of 1 s runs out, and the generation breaks for everyone.
  const doomedRedis = await connect(url);
  const doomed = new LockClient(doomedRedis, { prefix: 'example', commandTimeoutMs: 200, retries: 0 });
  doomed.on('error', () => undefined); // its renewals fail from the crash on: expected
  const waiting = clients.slice(0, 2).map((c) => stage(c).arrive({ leaseMs: 30_000, waitMs: 10_000 }).catch((e) => e));
  void stage(doomed).arrive({ leaseMs: 1_000 }).catch(() => undefined);
  while ((await stage(locks).state()).waiting < 3) await sleep(10); // all three arrived
  const crashedAt = performance.now();
  doomedRedis.disconnect();
  for (const outcome of await Promise.all(waiting)) {
    const broken = outcome instanceof BarrierBrokenError;
    console.log(broken ? `${outcome.code} (${outcome.reason}, generation ${outcome.generation})` : outcome);
  }
  const tookMs = performance.now() - crashedAt;
  console.log(`the others knew ${tookMs < 2_000 ? 'within' : 'LATER than'} its lease and 1 s`);

  await doomed.close();
  await Promise.all(clients.map((c) => c.close()));
  await locks.close();
  redis.disconnect();
});
