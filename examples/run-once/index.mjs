// Run-once jobs across a fleet: three instances (three clients, as three pods would have) share one
// node-cron schedule through holdfast's run coordinator, and each firing runs on one of them only;
// then runOnce() directly: one report per key, whoever asks, and a failed job is not re-run.
import { LockClient } from '@holdfast/core';
import cron from 'node-cron';
import { connect, withRedis } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

await withRedis(async (url) => {
  const instances = await Promise.all(
    ['web-1', 'web-2', 'web-3'].map(async (name) => {
      const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
      return { name, redis, locks: new LockClient(redis, { prefix: `example-once-${process.pid}` }) };
    }),
  );

  // node-cron ≥ 4.6: `distributed: true` asks the coordinator before every firing.
  const ranBy = new Map(); // firing time -> instances that ran it
  const tasks = instances.map(({ name, locks }) =>
    cron.schedule(
      '* * * * * *',
      ({ date }) => {
        const at = date.toISOString();
        ranBy.set(at, [...(ranBy.get(at) ?? []), name]);
        console.log(`${at} tick ran on ${name}`);
      },
      { name: 'tick', distributed: true, runCoordinator: locks.runCoordinator(), distributedLease: 10_000 },
    ),
  );
  await sleep(3_500);
  await Promise.all(tasks.map((task) => task.stop()));
  const twice = [...ranBy.values()].filter((names) => names.length > 1).length;
  console.log(`${ranBy.size} firings, each on one instance: ${twice === 0}`);

  // runOnce: the first caller runs the job, everyone else gets { ran: false }.
  const day = '2026-01-01';
  const outcomes = await Promise.all(
    instances.map(({ name, locks }) =>
      locks.runOnce(`daily-report:${day}`, async ({ token }) => `sent by ${name} (token ${token})`, { ttlMs: 60_000 }),
    ),
  );
  for (const [i, outcome] of outcomes.entries()) console.log(`${instances[i].name}:`, JSON.stringify(outcome));

  // A job that throws rejects where it ran, and the key stays claimed: nobody re-runs it.
  const failed = await instances[0].locks
    .runOnce(`invoice-run:${day}`, () => Promise.reject(new Error('mail server down')), { ttlMs: 60_000 })
    .catch((error) => error.message);
  const retried = await instances[1].locks.runOnce(`invoice-run:${day}`, () => 'run again', { ttlMs: 60_000 });
  console.log(`failed job: ${failed}; another instance then: ${JSON.stringify(retried)}`);

  for (const { locks, redis } of instances) {
    await locks.close();
    redis.disconnect();
  }
});
