// A chaos worker process: `workers` sequential loops of critical sections on
// the built packages, each event written to stdout as one JSON line stamped
// with process.hrtime.bigint(). Run with --unhandled-rejections=strict; only
// holdfast errors (lost leases, timeouts under faults) are expected and
// recorded, anything else crashes the process and fails the run.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockClient, fencedWrite, isHoldfastError } from '../../packages/core/dist/index.js';
import { requirePort } from '../../packages/core/dist/internal.js';
import { Watchdog } from '../../packages/watchdog/dist/index.js';
import { createGlideClient } from '../src/glide-client.mjs';
import { clientMode, createNodeRedisClient, nodeRedisMajor } from '../src/node-redis-client.mjs';

const config = JSON.parse(process.argv[2] ?? '{}');
const {
  proc,
  redisUrl,
  resourceUrl,
  prefix,
  workers = 1,
  sections = Infinity,
  durationMs = Infinity,
  locks = ['chaos'],
  leaseMs,
  watchdogMs,
  waitMs,
  holdMs = [0, 0],
  counterSleepMs = [0, 1],
  reentryRate = 0,
  counter = true,
  fenced = true,
  commandTimeoutMs = 2_000,
  redisOptions = {},
} = config;

function record(holder, lock, type, fields = {}) {
  const line = JSON.stringify({ ...fields, t: process.hrtime.bigint().toString(), holder, lock, type });
  process.stdout.write(`${line}\n`);
}

const between = ([min, max]) => min + Math.floor(Math.random() * (max - min + 1));

// redisOptions: the ioredis options a user's client would bring (e.g.
// maxRetriesPerRequest: null); only the lock client's connection gets them.
// In the node-redis pass (HOLDFAST_CLIENT=node-redis, inherited from the
// test), holdfast runs on node-redis, made the way the harness makes it, and
// the resource is written through it too: the worker is then a node-redis
// application (options node-redis has no counterpart for are dropped).
// In the GLIDE pass (HOLDFAST_CLIENT=glide) holdfast runs on a GLIDE client made the way the
// harness makes it; the resource stays on ioredis (GLIDE's API is not the one the section's
// resource calls are written in).
const nodeRedisPass = clientMode === 'node-redis';
const glidePass = clientMode === 'glide';
const redis = nodeRedisPass
  ? createNodeRedisClient(redisUrl, redisOptions)
  : glidePass
    ? await createGlideClient(redisUrl, redisOptions)
    : new Redis(redisUrl, { lazyConnect: false, ...redisOptions });
const resource = nodeRedisPass ? createNodeRedisClient(resourceUrl) : new Redis(resourceUrl);
// Connection errors under faults are reported by the clients as events; the
// calls that failed reject on their own. GLIDE has no events.
if (!glidePass) redis.on('error', () => {});
resource.on('error', () => {});
if (nodeRedisPass) await Promise.all([redis.connect(), resource.connect()]);
// node-redis only: its sendCommand takes the arguments as an array.
if (nodeRedisPass && process.env.HOLDFAST_REPLY_PROBE === '1') probeGrants(redis);

// The client kind holdfast detected, for the test to check (not a history event).
process.stdout.write(
  `${JSON.stringify({ client: requirePort('the worker client', redis).kind, ...(nodeRedisPass && { major: nodeRedisMajor }) })}\n`,
);

const client = new LockClient(redis, { prefix, commandTimeoutMs, ...(leaseMs ? { leaseMs } : {}) });
const watchdog = watchdogMs ? new Watchdog(client, { timeoutMs: watchdogMs }) : undefined;
watchdog?.on('error', () => {});
client.on('error', () => {});

// Tokens are unique per lock name, so (name, token) finds the holder told `lost`.
const holderOf = new Map();
client.on('lost', ({ name, token, reason }) => {
  record(holderOf.get(`${name}\u0000${token}`) ?? '?', name, 'lost', { token, reason });
});

async function section(holder, name) {
  const lock = client.lock(name);
  record(holder, name, 'acquire-invoke');
  try {
    await lock.withLock(
      async (lease) => {
        holderOf.set(`${name}\u0000${lease.token}`, holder);
        record(holder, name, 'acquire-ok', { token: lease.token, holdCount: lease.holdCount });
        // A section that throws (a re-entry, or the release of one, failing
        // under a fault) is released by withLock at once: its end is recorded,
        // or the history would show this holder holding the lock for ever.
        try {
          if (reentryRate > 0 && Math.random() < reentryRate) {
            await lock.withLock(async (inner) => {
              record(holder, name, 'acquire-ok', { token: inner.token, holdCount: inner.holdCount });
              record(holder, name, 'release-invoke', { holdCount: inner.holdCount });
            });
            record(holder, name, 'release-ok', { holdCount: 1 });
          }
          const hold = between(holdMs);
          if (hold > 0) await sleep(hold);
          if (counter && !lease.signal.aborted) {
            const key = `counter:${name}`;
            const value = Number((await resource.get(key)) ?? 0);
            record(holder, name, 'counter-read', { resource: key, value });
            const pause = between(counterSleepMs);
            if (pause > 0) await sleep(pause);
            if (!lease.signal.aborted) {
              record(holder, name, 'counter-write', { resource: key, value: value + 1 });
              await resource.set(key, String(value + 1));
            }
          }
          if (fenced && !lease.signal.aborted) {
            const key = `fenced:${name}`;
            record(holder, name, 'write-invoke', { resource: key, token: lease.token });
            const accepted = await fencedWrite(resource, key, lease.token, holder);
            record(holder, name, 'write-ok', { resource: key, accepted });
          }
          if (!lease.signal.aborted) record(holder, name, 'release-invoke', { holdCount: lease.holdCount });
        } catch (error) {
          if (!lease.signal.aborted) record(holder, name, 'release-invoke', { holdCount: lease.holdCount });
          throw error;
        }
      },
      waitMs ? { waitMs } : undefined,
    );
    record(holder, name, 'release-ok');
    return true;
  } catch (error) {
    if (!isHoldfastError(error)) throw error;
    record(holder, name, 'acquire-fail', { reason: error.code });
    return false;
  }
}

async function loop(index) {
  const holder = `${proc}w${index}`;
  const stopAt = performance.now() + durationMs;
  for (let done = 0; done < sections && performance.now() < stopAt; done++) {
    await section(holder, locks[Math.floor(Math.random() * locks.length)]);
  }
}

await Promise.all(Array.from({ length: workers }, (_, index) => loop(index)));
await client.close({ release: true });
await watchdog?.stop();
// node-redis's close() (quit() is its deprecated alias in 5), ioredis's quit().
// GLIDE's close() is synchronous.
const closeClient = (c) => (nodeRedisPass ? c.close() : c.quit());
await Promise.allSettled([glidePass ? Promise.resolve(redis.close()) : closeClient(redis), closeClient(resource)]);
// No process.exit(): the parent checks that nothing keeps this process alive.

/**
 * HOLDFAST_REPLY_PROBE=1 (test/README.md, "node-redis 5 under connection loss"): checks that the
 * client handed every grant reply of an acquire script to the command that asked for it. A grant
 * (a bare integer) writes the token under the request's field of the lock hash before replying;
 * an HGET of that field, sent on the same connection as soon as the reply is read (before holdfast
 * can release), must give the same token back. A mismatch goes to stderr, which fails the run.
 */
function probeGrants(client) {
  const send = client.sendCommand.bind(client);
  client.sendCommand = (args, ...rest) => {
    const reply = send(args, ...rest);
    const [command, , numKeys, lockKey, , , , , , requestId, mode] = args.map(String);
    if ((command === 'EVALSHA' || command === 'EVAL') && numKeys === '4' && ['try', 'join', 'reenter'].includes(mode)) {
      reply.then((token) => {
        if (typeof token !== 'number') return;
        send(['HGET', lockKey, `@${requestId}`]).then((field) => {
          if (String(field) !== String(token)) process.stderr.write(`grant reply ${token} for ${mode} request ${requestId} on ${lockKey}; the lock hash says ${String(field).slice(0, 40)}\n`);
        }, () => {});
      }, () => {});
    }
    return reply;
  };
}
