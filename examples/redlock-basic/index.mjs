// Redlock over three local Redis servers, end to end: acquire, re-enter,
// release, lose one server and keep going, lose a second and see why it fails.
// Starts and stops its own redis-server processes (needs `redis-server` on PATH), even when
// REDIS_URL is set: it kills servers to show a quorum surviving and failing.
import { QuorumError, Redlock } from '@holdfast/redlock';
import { connect, fail, startRedisServer } from '../shared/redis.mjs';

const servers = [];

/** Starts a redis-server with a client for it (retrying, so a killed server is an instance down). */
async function startServer() {
  const server = await startRedisServer();
  servers.push(server);
  server.client = await connect(server.url, { maxRetriesPerRequest: null, retryStrategy: () => 50 }); // see ../shared/redis.mjs
  server.client.on('error', () => {});
  return server;
}

/** Closes the client and kills its server; a server killed already is not killed again. */
async function killServer(server) {
  if (!servers.includes(server)) return;
  servers.splice(servers.indexOf(server), 1);
  server.client.disconnect();
  await server.stop();
}

const log = (...args) => console.log(...args);

async function main() {
  if (process.env.REDIS_URL) log('REDIS_URL is not used here: Redlock needs three independent servers this example can kill');
  const [a, b, c] = await Promise.all([startServer(), startServer(), startServer()]).catch((error) =>
    fail(`${error.message}\n(this example starts three redis-server processes of its own, even when REDIS_URL is set)`),
  );
  log(`started redis-server on ports ${a.port}, ${b.port}, ${c.port}`);
  const clients = [a.client, b.client, c.client];

  // instanceTimeoutMs (default 50 ms): how long a round waits for each server. Generous here, so a
  // busy machine's slow reply is not taken for a server down; a killed one fails at once anyway.
  const options = { leaseMs: 10_000, instanceTimeoutMs: 1_000 };
  const redlock = new Redlock(clients, options);
  redlock.on('acquired', (e) =>
    log(
      `  [acquired] ${e.name} token=${e.token} holdCount=${e.holdCount} reentrant=${e.reentrant} validity=${e.validityMs} ms`,
    ),
  );
  redlock.on('released', (e) => log(`  [released] ${e.name} token=${e.token} holdCount=${e.holdCount}`));
  redlock.on('extended', (e) => log(`  [extended] ${e.name} token=${e.token} lease=${e.leaseMs} ms`));
  redlock.on('lost', (e) => log(`  [lost]     ${e.name} token=${e.token} reason=${e.reason}`));
  // Background failures (a dead server's subscription, cleanup calls): reported, never thrown.
  redlock.on('error', () => {});

  const lock = redlock.lock('payout:7');
  log(`\n1. acquire, re-enter from inside, release (quorum ${redlock.quorum} of ${redlock.instanceCount})`);
  await lock.withLock(async (outer) => {
    log(`  holding: token=${outer.token}, validity left ${outer.validityMs} ms`);
    await lock.withLock(async (inner) => {
      log(`  re-entered: same token=${inner.token}, holdCount=${inner.holdCount}`);
    });
    await outer.extend(15_000);
  });

  log('\n2. another process cannot take it while it is held');
  const rival = new Redlock(clients, options);
  rival.on('error', () => {}); // as for redlock above: its calls to a server killed below fail in the background
  const held = await lock.acquire();
  log(`  rival.tryAcquire() -> ${await rival.lock('payout:7').tryAcquire()}`);
  await held.release();

  log(`\n3. kill one server (port ${a.port}): a majority is still there`);
  await killServer(a);
  const started = performance.now();
  const lease = await lock.acquire({ waitMs: 2_000 });
  log(`  acquired in ${(performance.now() - started).toFixed(1)} ms with token=${lease.token}`);
  await lease.release();

  log(`\n4. kill a second server (port ${b.port}): no majority, no lock`);
  await killServer(b);
  try {
    await lock.tryAcquire();
  } catch (error) {
    if (!(error instanceof QuorumError)) throw error;
    log(`  ${error.name} (${error.code}, ${error.reason}):`);
    for (const outcome of error.outcomes) {
      const detail = outcome.status === 'error' ? (outcome.timedOut ? 'timed out' : outcome.error.message) : '';
      log(`    instance ${outcome.instance}: ${outcome.status} ${detail}`);
    }
  }

  await rival.close();
  await redlock.close();
}

try {
  await main();
} finally {
  await Promise.all([...servers].map(killServer));
  log('\nstopped every redis-server; done');
}
