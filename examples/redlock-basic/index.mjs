// Redlock over three local Redis servers, end to end: acquire, re-enter,
// release, lose one server and keep going, lose a second and see why it fails.
// Starts and stops its own redis-server processes (needs `redis-server` on PATH).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { Redis } from 'ioredis';
import { QuorumError, Redlock } from '@holdfast/redlock';

const HOST = '127.0.0.1';
const servers = [];

async function freePort() {
  const probe = net.createServer();
  probe.listen(0, HOST);
  await once(probe, 'listening');
  const { port } = probe.address();
  probe.close();
  await once(probe, 'close');
  return port;
}

async function startServer() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', HOST], {
    stdio: 'ignore',
  });
  const failed = new Promise((_, reject) => {
    child.once('error', (error) => reject(new Error(`could not start redis-server: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`redis-server on port ${port} exited with code ${code}`)));
  });
  const server = { port, child, alive: true };
  servers.push(server);
  // Retries connecting until the server answers; the timer bounds the whole start.
  const client = new Redis({ host: HOST, port, maxRetriesPerRequest: null, retryStrategy: () => 50 });
  client.on('error', () => {});
  const timer = setTimeout(() => client.disconnect(), 5_000);
  try {
    await Promise.race([client.ping(), failed]);
  } finally {
    clearTimeout(timer);
  }
  failed.catch(() => {});
  server.client = client;
  return server;
}

async function killServer(server) {
  if (!server.alive) return;
  server.alive = false;
  const exited = once(server.child, 'exit');
  server.child.kill('SIGKILL');
  await exited;
}

// Never leave redis-server processes behind, whatever happens.
process.on('exit', () => {
  for (const server of servers) if (server.alive) server.child.kill('SIGKILL');
});

const log = (...args) => console.log(...args);

async function main() {
  const [a, b, c] = await Promise.all([startServer(), startServer(), startServer()]);
  log(`started redis-server on ports ${a.port}, ${b.port}, ${c.port}`);
  const clients = [a.client, b.client, c.client];

  const redlock = new Redlock(clients, { leaseMs: 10_000 });
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
  const rival = new Redlock(clients);
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
  for (const server of servers) server.client?.disconnect();
  await Promise.all(servers.map(killServer));
  log('\nstopped every redis-server; done');
}
