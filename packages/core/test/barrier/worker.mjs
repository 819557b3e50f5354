// A process of the latch and barrier multi-process tests, on the built package: one
// count-down-and-wait, one wait, or one arrival, reported as one JSON line on stdout.
import { Redis } from 'ioredis';
import { LockClient, isHoldfastError } from '../../dist/index.js';

const { redisUrl, prefix, op, name, parties, leaseMs, waitMs } = JSON.parse(process.argv[2] ?? '{}');
const redis = new Redis(redisUrl);
const locks = new LockClient(redis, { prefix });
locks.on('error', () => undefined); // a frozen or cut-off party's renewals fail: expected here

const report = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
try {
  if (op === 'countDownAndWait') {
    await locks.countDownLatch(name).countDownAndWait({ waitMs });
    report({ done: true });
  } else if (op === 'wait') {
    report({ waiting: true });
    await locks.countDownLatch(name).wait({ waitMs });
    report({ done: true });
  } else {
    const { generation } = await locks.barrier(name, { parties }).arrive({ leaseMs, waitMs });
    report({ done: true, generation });
  }
} catch (error) {
  if (!isHoldfastError(error)) throw error;
  report({ error: error.code, reason: error.reason, generation: error.generation });
} finally {
  await locks.close();
  redis.disconnect();
}
