/**
 * The programs the node-redis consumer tests run (node-redis-consumers.ts): each
 * package used from ESM, CommonJS and TypeScript with a client of the `redis`
 * package, as its README shows, and nothing from ioredis. Each program prints one
 * JSON line the test compares.
 */

export type Imp = 'import' | 'require';

const load = (imp: Imp, names: Record<string, string>) =>
  Object.entries(names)
    .map(([pkg, what]) => (imp === 'import' ? `import { ${what} } from '${pkg}';` : `const { ${what} } = require('${pkg}');`))
    .join('\n');

/**
 * A hand-off to a waiter on another client: `waiter` waits for the lock `holder`
 * holds (FIFO: it cannot hold it before the release) and is handed it at the
 * release. Leaves `held`, `next` and `handedOff` in scope.
 */
const handOff = (holder: string, waiter: string, name: string) => `const held = await ${holder}.lock('${name}').acquire();
  let released = false;
  let early = false;
  const waiting = ${waiter}.lock('${name}').acquire({ waitMs: 20000 }).then((lease) => {
    early = !released;
    return lease;
  });
  await new Promise((r) => setTimeout(r, 100));
  released = true;
  await held.release();
  const next = await waiting;
  const handedOff = !early && next.isHeld && next.token > held.token;`;

/**
 * Reentrancy, a typed error, a hand-off to a waiter on another client (FIFO: the
 * waiter cannot hold the lock before the release), and the user's client left open
 * by `close()`.
 */
export const coreApp = (imp: Imp) => `
${load(imp, { redis: 'createClient', '@holdfast/core': 'LockClient, isHoldfastError' })}
const main = async () => {
  const url = process.env.REDIS_URL;
  const redis = await createClient({ url }).connect();
  const other = await createClient({ url }).connect();
  const locks = new LockClient(redis, { prefix: 'consumer-nr' });
  const peer = new LockClient(other, { prefix: 'consumer-nr' });
  const n = await locks.lock('c').withLock(async () => locks.lock('c').withLock((l) => l.holdCount));
  const e = await locks.lock('c').acquire({ leaseMs: -1 }).catch((err) => err);
  ${handOff('locks', 'peer', 'h')}
  await next.release();
  await Promise.all([locks.close(), peer.close()]);
  // The application's clients are its own: still open after close().
  const open = (await redis.ping()) === 'PONG' && (await other.ping()) === 'PONG';
  redis.destroy();
  other.destroy();
  console.log(JSON.stringify({ n, typed: isHoldfastError(e), handedOff, open }));
};
main();
`;

export const watchdogApp = (imp: Imp) => `
${load(imp, { redis: 'createClient', '@holdfast/core': 'LockClient', '@holdfast/watchdog': 'Watchdog' })}
const main = async () => {
  const redis = await createClient({ url: process.env.REDIS_URL }).connect();
  const locks = new LockClient(redis, { prefix: 'consumer-nr-dog' });
  // A long lease renewed every 100 ms: a busy machine loses no lease, and a tick that renews
  // both shows the batched renewal working.
  const dog = new Watchdog(locks, { timeoutMs: 10000, renewIntervalMs: 100 });
  const renewedBoth = new Promise((r) => dog.on('renewed', (e) => e.count === 2 && r(true)));
  const lease = await locks.lock('w').acquire();
  const permit = await locks.semaphore('w-pool', { permits: 2 }).acquire();
  await renewedBoth;
  const renewed = lease.isHeld && permit.isHeld && (await locks.lock('w').remainingTtlMs()) > 0;
  await Promise.all([lease.release(), permit.release()]);
  await dog.stop();
  await locks.close();
  redis.destroy();
  console.log(JSON.stringify({ renewed, leaseMs: lease.leaseMs }));
};
main();
`;

// Three servers: Redlock refuses one server under three names.
export const redlockApp = (imp: Imp) => `
${load(imp, { redis: 'createClient', '@holdfast/redlock': 'Redlock, isHoldfastError' })}
const main = async () => {
  const clients = await Promise.all(process.env.REDIS_URLS.split(',').map((url) => createClient({ url }).connect()));
  // A generous per-instance wait: the package as installed, not the machine's speed, is under test.
  const redlock = new Redlock(clients, { prefix: 'consumer-nr-rl', instanceTimeoutMs: 5000 });
  const n = await redlock.lock('r').withLock(async () => redlock.lock('r').withLock((l) => l.holdCount));
  const e = await redlock.lock('r').acquire({ leaseMs: -1 }).catch((err) => err);
  await redlock.close();
  for (const c of clients) c.destroy();
  console.log(JSON.stringify({ n, typed: isHoldfastError(e) }));
};
main();
`;

/** Both clients in one process: a lock held through ioredis handed to a waiter on node-redis, and one Redlock over both kinds. */
export const bothApp = (imp: Imp) => `
${load(imp, { ioredis: 'Redis', redis: 'createClient', '@holdfast/core': 'LockClient', '@holdfast/redlock': 'Redlock' })}
const main = async () => {
  const [url, ...urls] = process.env.REDIS_URLS.split(',');
  const io = new Redis(url);
  const nr = await createClient({ url }).connect();
  const viaIoredis = new LockClient(io, { prefix: 'consumer-both' });
  const viaNodeRedis = new LockClient(nr, { prefix: 'consumer-both' });
  ${handOff('viaIoredis', 'viaNodeRedis', 'b')}
  await next.release();
  const others = await Promise.all(urls.map((u) => createClient({ url: u }).connect()));
  const redlock = new Redlock([io, ...others], { prefix: 'consumer-both-rl', instanceTimeoutMs: 5000 });
  const n = await redlock.lock('r').withLock(async () => redlock.lock('r').withLock((l) => l.holdCount));
  await Promise.all([viaIoredis.close(), viaNodeRedis.close(), redlock.close()]);
  io.disconnect();
  nr.destroy();
  for (const c of others) c.destroy();
  console.log(JSON.stringify({ handedOff, n }));
};
main();
`;

/** Types: the clients as \`createClient()\`, \`createCluster()\` and \`createSentinel()\` return them, no casts. */
export const coreTypes = `import { createClient, createCluster, createSentinel } from 'redis';
import { LockClient, type Lease } from '@holdfast/core';
const locks = new LockClient(createClient());
const resp3 = new LockClient(createClient({ RESP: 3 }));
const cluster = new LockClient(createCluster({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }));
const sentinel = new LockClient(createSentinel({ name: 'mymaster', sentinelRootNodes: [{ host: '127.0.0.1', port: 26379 }] }));
async function connected(): Promise<LockClient> {
  return new LockClient(await createClient({ url: 'redis://127.0.0.1:6379' }).connect(), { prefix: 'app' });
}
const lease: Promise<Lease> = locks.lock('x').acquire({ waitMs: 10 });
void [resp3, cluster, sentinel, connected, lease];
`;

export const watchdogTypes = `import { createClient } from 'redis';
import { LockClient } from '@holdfast/core';
import { Watchdog, type LeaseLostEvent } from '@holdfast/watchdog';
const locks = new LockClient(createClient());
const dog = new Watchdog(locks);
dog.on('lost', (e: LeaseLostEvent) => e.reason satisfies string);
void dog.stop();
`;

export const redlockTypes = `import { createClient } from 'redis';
import { Redlock, QuorumError, type RedlockLease } from '@holdfast/redlock';
const [a, b, c] = [createClient(), createClient({ url: 'redis://127.0.0.1:6380' }), createClient({ url: 'redis://127.0.0.1:6381' })];
const redlock = new Redlock([a, b, c]);
const lease: Promise<RedlockLease> = redlock.lock('x').acquire({ waitMs: 10 });
lease.then((l) => l.validityMs satisfies number, (e: unknown) => e instanceof QuorumError);
`;

export const bothTypes = `import { Redis, Cluster } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { LockClient } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
const clients = [new LockClient(new Redis()), new LockClient(createClient()), new LockClient(new Cluster([7000])), new LockClient(createCluster({ rootNodes: [] }))];
const mixed = new Redlock([new Redis(), createClient(), createClient({ url: 'redis://127.0.0.1:6381' })]);
void [clients, mixed];
`;
