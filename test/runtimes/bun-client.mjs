// The scenarios over Bun's own client (`RedisClient` from `bun`), run by runtimes.test.ts under
// Bun only, from the packed packages. Prints one JSON object: each scenario's outcome.
// REDIS_URLS: the first serves the scenarios; BUN_STOP_URL / BUN_STOP_PID: a server this file
// stops (SIGSTOP) and resumes; BUN_CLUSTER_URL: a server started with `cluster-enabled yes`.
import { RedisClient } from 'bun';
import { LockClient } from '@holdfast/core';

const url = process.env.REDIS_URLS.split(',')[0];
const prefix = `rt-bun-client-${Date.now()}`;
const clients = [];
const bun = (at = url) => {
  const client = new RedisClient(at);
  clients.push(client);
  return client;
};
const admin = bun();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polls `check` until it is true (no fixed wait: the outcome is what is asserted). */
const until = async (check, what) => {
  for (let i = 0; i < 1_000; i++) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`never: ${what}`);
};
const subscribersOf = async (name) => {
  const channels = await admin.send('PUBSUB', ['CHANNELS', `*${name}*`]);
  if (channels.length === 0) return 0;
  const counts = await admin.send('PUBSUB', ['NUMSUB', ...channels]);
  return counts.filter((_, i) => i % 2 === 1).reduce((sum, n) => sum + Number(n), 0);
};
/** The error's class and code, as holdfast types it. */
const typed = (error) => ({ name: error?.name, code: error?.code });
const out = {};

// Acquire and release, and re-entry; close() leaves the application's client open.
{
  const client = bun();
  const locks = new LockClient(client, { prefix });
  const lease = await locks.lock('basic').acquire();
  const held = await new LockClient(bun(), { prefix }).lock('basic').tryAcquire();
  const first = { holdCount: lease.holdCount, otherGot: held !== null };
  await lease.release();
  const again = await locks.lock('basic').tryAcquire();
  first.freeAfterRelease = again !== null;
  await again.release();
  out.basic = first;
  out.reentry = await locks.lock('re').withLock(() => locks.lock('re').withLock((l) => l.holdCount));
  await locks.close();
  out.userClientOpen = { connected: client.connected, ping: await client.send('PING', []) };
}

// Contended hand-off, woken by the holder's release (PUBLISH, as Bun subscribes with SUBSCRIBE):
// the waiter's wait is far shorter than the holder's lease, so only the release message wakes it.
{
  const a = new LockClient(bun(), { prefix });
  const b = new LockClient(bun(), { prefix });
  const held = await a.lock('handoff').acquire({ leaseMs: 60_000 });
  const waiting = b.lock('handoff').acquire({ waitMs: 20_000 });
  await until(async () => (await subscribersOf(`${prefix}`)) > 0 && (await subscribersOf('handoff')) > 0, 'the waiter subscribed');
  await held.release();
  const next = await waiting;
  out.handoff = { higherToken: next.token > held.token, holdCount: next.holdCount };
  await next.release();
  await Promise.all([a.close(), b.close()]);
}

// A semaphore of two permits: a third acquirer waits and gets the permit given back.
{
  const locks = new LockClient(bun(), { prefix });
  const others = new LockClient(bun(), { prefix });
  const pool = locks.semaphore('pool', { permits: 2 });
  const [one, two] = [await pool.acquire({ leaseMs: 60_000 }), await pool.acquire({ leaseMs: 60_000 })];
  const none = await others.semaphore('pool', { permits: 2 }).tryAcquire();
  const third = others.semaphore('pool', { permits: 2 }).acquire({ waitMs: 20_000 });
  await until(async () => (await subscribersOf('pool')) > 0, 'the semaphore waiter subscribed');
  await one.release();
  const got = await third;
  out.semaphore = { thirdRefusedWhileFull: none === null, thirdGotReleasedPermit: got.permits === 1 };
  await Promise.all([got.release(), two.release()]);
  await Promise.all([locks.close(), others.close()]);
}

// SCRIPT FLUSH: the scripts are loaded again (EVAL after NOSCRIPT), the lock answers as before.
{
  const locks = new LockClient(bun(), { prefix });
  const lease = await locks.lock('flush').acquire();
  await admin.send('SCRIPT', ['FLUSH']);
  await lease.release();
  await admin.send('SCRIPT', ['FLUSH']);
  const again = await locks.lock('flush').acquire();
  out.scriptFlush = { reacquired: again.holdCount === 1 };
  await again.release();
  await locks.close();
}

// The waiter's subscriber connection killed: Bun subscribes nothing again by itself; holdfast
// replaces that connection, subscribes again, and the release still wakes the waiter.
{
  const a = new LockClient(bun(), { prefix });
  const b = new LockClient(bun(), { prefix });
  const held = await a.lock('killed').acquire({ leaseMs: 60_000 });
  const waiting = b.lock('killed').acquire({ waitMs: 30_000 });
  await until(async () => (await subscribersOf('killed')) > 0, 'the waiter subscribed');
  const killed = await admin.send('CLIENT', ['KILL', 'TYPE', 'pubsub']);
  await until(async () => (await subscribersOf('killed')) > 0, 'the waiter subscribed again');
  await held.release();
  const next = await waiting;
  out.subscriberKilled = { killed: killed >= 1, woken: next.token > held.token };
  await next.release();
  await Promise.all([a.close(), b.close()]);
}

// A stopped server (SIGSTOP): Bun's client has no command timeout, holdfast's commandTimeoutMs
// bounds the call, which fails with RedisTimeoutError; resumed, the lock works again.
{
  const pid = Number(process.env.BUN_STOP_PID);
  const locks = new LockClient(bun(process.env.BUN_STOP_URL), { prefix, commandTimeoutMs: 300, retries: 1 });
  await (await locks.lock('stopped').acquire()).release();
  process.kill(pid, 'SIGSTOP');
  let error;
  try {
    await locks.lock('stopped').tryAcquire();
  } catch (caught) {
    error = caught;
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  const after = await locks.lock('stopped').acquire({ waitMs: 20_000 });
  out.stopped = { error: typed(error), afterResume: after.holdCount };
  await after.release();
  await locks.close();
}

// Bun's client has no Cluster support: refused at the first call, with a typed error.
{
  const locks = new LockClient(bun(process.env.BUN_CLUSTER_URL), { prefix });
  const error = await locks.lock('cluster').tryAcquire().then(() => undefined, (caught) => caught);
  out.clusterRefused = { ...typed(error), namesTheGap: /no Cluster or Sentinel support/.test(error?.message) };
  await locks.close();
}

for (const client of clients) client.close();
console.log(JSON.stringify(out));
