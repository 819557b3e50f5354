// CommonJS `require` of the packed packages (runtimes.test.ts runs it on Node and Bun).
const { Redis } = require('ioredis');
const { LockClient } = require('@holdfast/core');
const { Watchdog } = require('@holdfast/watchdog');
const { Redlock } = require('@holdfast/redlock');

const main = async () => {
  const redis = new Redis(process.env.REDIS_URLS.split(',')[0]);
  const locks = new LockClient(redis, { prefix: `rt-cjs-${Date.now()}` });
  const dog = new Watchdog(locks, { timeoutMs: 10_000 });
  const n = await locks.lock('c').withLock(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return locks.lock('c').withLock((l) => l.holdCount);
  });
  await dog.stop();
  await locks.close();
  redis.disconnect();
  console.log(JSON.stringify({ n, redlock: typeof Redlock }));
};
main();
