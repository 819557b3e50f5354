// The consumer scenarios every runtime must pass (run by runtimes.test.ts on Node, Bun and Deno,
// from the packed packages installed with npm). Prints one JSON object: each scenario's outcome.
// REDIS_URLS: three servers (Redlock needs three; the other scenarios use the first).
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { LockClient, LockTimeoutError } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { Redlock } from '@holdfast/redlock';

const urls = process.env.REDIS_URLS.split(',');
const prefix = `rt-${process.env.RUNTIME_LABEL}-${Date.now()}`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const clients = [];
const redis = () => {
  const client = new Redis(urls[0]);
  clients.push(client);
  return client;
};
const out = {};

// Re-entry from inside withLock: after awaits and from the callbacks of timers, immediates,
// microtasks and promise reactions the section started.
{
  const locks = new LockClient(redis(), { prefix });
  const lock = locks.lock('re');
  // A chain that lost its section waits for itself: it reports the timeout instead of a count.
  const inner = () => lock.withLock((l) => l.holdCount, { waitMs: 2_000 }).catch((error) => error.name);
  out.reentry = await lock.withLock(async () => {
    await sleep(5);
    const afterAwait = await inner();
    const timeout = await new Promise((resolve, reject) => setTimeout(() => inner().then(resolve, reject), 5));
    const immediate = await new Promise((resolve, reject) => setImmediate(() => inner().then(resolve, reject)));
    const microtask = await new Promise((resolve, reject) => queueMicrotask(() => inner().then(resolve, reject)));
    const then = await Promise.resolve().then(inner);
    const nested = await lock.withLock(async () => {
      await sleep(1);
      return inner();
    });
    return { afterAwait, timeout, immediate, microtask, then, nested };
  });
  // Outside any section: a new owner (holdCount 1), not a stale frame.
  out.afterSection = await inner();

  // Promise reactions chained with .then() (Bun 1.4.0 lost the store there: oven-sh/bun#33806),
  // and a thenable (a query builder, say) returned from an async function after an await, whose
  // then() Bun ran without the store (oven-sh/bun#34266), with `return await`, which does not
  // depend on that fix.
  const thenable = () => ({ then: (resolve, reject) => inner().then(resolve, reject) });
  out.thenables = await lock.withLock(async () => ({
    chain: await Promise.resolve(1).then(() => 2).then(() => inner()),
    returned: await (async () => {
      await null;
      return thenable();
    })(),
    returnAwait: await (async () => {
      await null;
      return await thenable();
    })(),
  }));

  // Sibling sections of one client exclude each other: never two inside.
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 10 }, () =>
      lock.withLock(async () => {
        most = Math.max(most, ++inside);
        await sleep(2);
        inside--;
      }),
    ),
  );
  out.siblingsMaxInside = most;
  await locks.close();
}

// Hand-off: a waiter on a second connection gets the lock when the holder releases, not before.
{
  const a = new LockClient(redis(), { prefix });
  const b = new LockClient(redis(), { prefix });
  const held = await a.lock('handoff').acquire();
  let waiterHad = false;
  const waiting = b.lock('handoff').acquire().then((lease) => {
    waiterHad = true;
    return lease;
  });
  const timedOut = await b.lock('handoff').acquire({ waitMs: 100 }).catch((error) => error instanceof LockTimeoutError);
  const before = waiterHad;
  await held.release();
  const next = await waiting;
  out.handoff = { timedOut, before, higherToken: next.token > held.token };
  await next.release();
  await Promise.all([a.close(), b.close()]);
}

// Watchdog: a lease without leaseMs gets the watchdog's timeoutMs and is renewed while held.
{
  const locks = new LockClient(redis(), { prefix });
  const dog = new Watchdog(locks, { timeoutMs: 10_000, renewIntervalMs: 100 });
  const lease = await locks.lock('dog').acquire();
  await new Promise((resolve) => dog.once('renewed', resolve));
  out.watchdog = { leaseMs: lease.leaseMs, held: lease.isHeld };
  await lease.release();
  await dog.stop();
  await locks.close();
}

// `lost` before expiry: a lease nobody renews is reported lost (and its signal aborted) while
// Redis still holds it: half the lease is kept back for drift here, so the report comes about a
// second before the key's expiry, however slow the machine.
{
  const locks = new LockClient(redis(), { prefix, driftFactor: 0.5 });
  const lost = new Promise((resolve) => locks.once('lost', (event) => resolve({ event, at: performance.now() })));
  const started = performance.now();
  const lease = await locks.lock('lost').acquire({ leaseMs: 2_000 });
  const { event, at } = await lost;
  out.lost = { reason: event.reason, aborted: lease.signal.aborted, beforeExpiry: at - started < 2_000 };
  await locks.close();
}

// Redlock over three servers, re-entered.
{
  const three = urls.map((url) => {
    const client = new Redis(url);
    clients.push(client);
    return client;
  });
  const redlock = new Redlock(three, { prefix, instanceTimeoutMs: 5_000 });
  out.redlock = await redlock.lock('rl').withLock(() => redlock.lock('rl').withLock((l) => l.holdCount));
  await redlock.close();
}

// node-redis: the same lock through the other client library.
{
  const client = await createClient({ url: urls[0] }).connect();
  const locks = new LockClient(client, { prefix });
  out.nodeRedis = await locks.lock('nr').withLock(async () => {
    await sleep(1);
    return locks.lock('nr').withLock((l) => l.holdCount);
  });
  await locks.close();
  client.destroy();
}

for (const client of clients) client.disconnect();
console.log(JSON.stringify(out));
