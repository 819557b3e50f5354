// A process of the idempotency and single-flight multi-process tests, on the built package:
// `calls` concurrent calls of one key. Its fn reports `{ ran, token }`, writes its token to a
// fenced key, and (with `gated`) waits for a `go` line on stdin before it resolves. Every
// call's outcome is one JSON line on stdout.
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { LockClient, fencedWrite, isHoldfastError } from '../../dist/index.js';

const { redisUrl, prefix, op, name, key, calls, fingerprint, waitMs, leaseMs, gated, fenceKey } = JSON.parse(process.argv[2] ?? '{}');
const redis = new Redis(redisUrl);
const locks = new LockClient(redis, { prefix });
locks.on('error', () => undefined); // a frozen process's renewals fail: expected here

const report = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
let go;
const opened = new Promise((resolve) => (go = resolve));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'go') go();
});

async function fn({ token }) {
  report({ ran: true, token, pid: process.pid });
  if (gated) await opened;
  const written = await fencedWrite(redis, fenceKey, token, `pid ${process.pid}`);
  return { token, pid: process.pid, written };
}

const one = async () => {
  try {
    if (op === 'flight') {
      const value = await locks.singleFlight(key, fn, { leaseMs, waitMs });
      report({ value });
    } else {
      const { value, replayed, token } = await locks.idempotency(name, { leaseMs }).run(key, fn, { fingerprint, waitMs });
      report({ value, replayed, token });
    }
  } catch (error) {
    if (!isHoldfastError(error)) throw error;
    report({ error: error.code, message: error.message, cause: error.cause });
  }
};
report({ started: true });
await Promise.all(Array.from({ length: calls ?? 1 }, one));
await locks.close();
redis.disconnect();
process.exit(0);
