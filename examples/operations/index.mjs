// Operations: contention on a lock and a semaphore, with the `holdfast` CLI beside it. Workers
// named in their LockClient options take `orders` and permits of `pool` in turns (and one reads
// `catalog` throughout) while `holdfast watch` draws its table three times; then `holdfast
// inspect` shows a lock stuck on a crashed holder with a waiter queued, and `holdfast release
// --force --yes` frees it, which wakes that waiter.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { LockClient } from '@holdfast/core';
import { connect, listLength, withRedis } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const PREFIX = 'example-ops';
// The bin of @holdfast/cli, as `npx holdfast` would run it.
const BIN = path.join(path.dirname(createRequire(import.meta.url).resolve('@holdfast/cli/package.json')), 'dist', 'cli.js');

/** Runs `holdfast …` against the example's Redis; resolves with its exit code and output. */
function holdfast(url, ...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args, '--url', url, '--prefix', PREFIX], (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    );
  });
}

await withRedis(async (url) => {
  const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
  const workers = ['worker-1', 'worker-2', 'worker-3'].map((name) => new LockClient(redis, { prefix: PREFIX, name }));

  // Contention: every worker takes `orders` for 40 ms, then 1 of 2 permits of `pool`, until told to stop.
  let running = true;
  let sections = 0;
  const loops = workers.map(async (locks) => {
    const pool = locks.semaphore('pool', { permits: 2 });
    while (running) {
      await locks.lock('orders').withLock(() => sleep(40));
      await pool.withLock(() => sleep(40));
      sections++;
    }
  });

  // And a report that reads `catalog` through the whole watch.
  const reading = await workers[1].readWriteLock('catalog').read.acquire();

  const watch = await holdfast(url, 'watch', '--iterations', '3', '--interval', '300');
  console.log(watch.stdout.trimEnd());
  running = false;
  await reading.release();
  await Promise.all(loops);
  console.log(`sections run during the watch: ${sections}`);

  // A holder that crashed: its lease (60 s) outlives it, and a worker queues behind it. A crashed
  // process never closes its client (close() would take its name out of Redis), so this one is
  // only closed at the end.
  const crashed = new LockClient(redis, { prefix: PREFIX, name: 'crashed-job' });
  await crashed.lock('orders').acquire({ leaseMs: 60_000 });
  const waiting = workers[0].lock('orders').acquire({ waitMs: 30_000 });
  while ((await listLength(redis, workers[0].lock('orders').keys.queue)) === 0) await sleep(10);

  const inspect = await holdfast(url, 'inspect', 'orders');
  console.log(inspect.stdout.trimEnd());
  const release = await holdfast(url, 'release', 'orders', '--force', '--yes');
  console.log(release.stdout.trimEnd());
  const lease = await waiting;
  console.log(`worker-1 woken with token ${lease.token}`);
  await lease.release();

  const ls = await holdfast(url, 'ls');
  console.log(`holdfast ls: exit ${ls.code}, ${ls.stderr.trim()}`);
  await Promise.all([...workers, crashed].map((locks) => locks.close()));
  await redis.quit();
});
