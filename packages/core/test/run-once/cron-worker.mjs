// One instance of a fleet for cron.slow.test.ts: node-cron fires a task every second, coordinated
// across every instance by holdfast's run coordinator; each run it wins is recorded in a Redis list as
// `<firing ISO time> <instance name>`. Arguments: port, prefix, list key, instance name.
import { LockClient } from '@holdfast/core';
import { Redis } from 'ioredis';
import cron from 'node-cron';

const [port, prefix, list, name] = process.argv.slice(2);
const redis = new Redis({ host: '127.0.0.1', port: Number(port), lazyConnect: true });
await redis.connect();
const locks = new LockClient(redis, { prefix });
locks.on('error', (error) => console.error(`${name}: holdfast error`, error));

const task = cron.schedule(
  '* * * * * *',
  async ({ date }) => {
    await redis.rpush(list, `${date.toISOString()} ${name}`);
  },
  // The claim outlives any pause of the test (a few seconds): an instance resumed late skips.
  { name: 'tick', distributed: true, runCoordinator: locks.runCoordinator(), distributedLease: 30_000 },
);

process.once('SIGTERM', async () => {
  await task.stop();
  await locks.close();
  redis.disconnect();
});
console.log('ready');
