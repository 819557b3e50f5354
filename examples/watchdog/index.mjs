// Automatic renewal, then a lease-lost alert: Redis is paused (SIGSTOP) while a
// long job holds the lock, and the job is aborted through lease.signal before
// the server-side expiry.
import { Redis } from 'ioredis';
import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { printEvents, startRedisServer } from '../shared/redis.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function longJob(signal) {
  for (let step = 1; ; step++) {
    await sleep(250);
    if (signal.aborted) {
      console.log(`job stopped at step ${step}: ${signal.reason.message}`);
      return;
    }
    console.log(`job step ${step}`);
  }
}

const external = process.env.REDIS_URL;
const server = external ? undefined : await startRedisServer();
const redis = new Redis(external ?? server.url, { maxRetriesPerRequest: 1 });
redis.on('error', () => undefined);
const locks = new LockClient(redis, { prefix: 'example', commandTimeoutMs: 300 });
const dog = new Watchdog(locks, { timeoutMs: 1_500 }); // renews every 500 ms
printEvents(locks);
dog.on('renewed', (e) => console.log(`  [watchdog] renewed ${e.count} lease(s) in ${e.durationMs.toFixed(1)} ms`));
dog.on('renewalFailed', (e) => console.log(`  [watchdog] renewal failed: ${e.error.message}`));
dog.on('lost', (e) => console.log(`  [watchdog] LOST ${e.name} (${e.reason})`));
locks.on('error', () => undefined);

const lease = await locks.lock('nightly-export').acquire(); // no leaseMs: renewed by the watchdog
console.log(`holding ${lease.name}, token ${lease.token}, lease ${lease.leaseMs} ms, renewed automatically`);
const job = longJob(lease.signal);

await sleep(2_000); // past the 1.5 s lease: still held thanks to renewal
if (server) {
  console.log('pausing Redis (SIGSTOP) for 3 s ...');
  const pausedAt = performance.now();
  server.pause();
  lease.signal.addEventListener('abort', () =>
    console.log(`lease reported lost ${Math.round(performance.now() - pausedAt)} ms after the pause (lease 1500 ms)`),
  );
  await sleep(3_000);
  server.resume();
  console.log('Redis resumed');
} else {
  console.log('REDIS_URL is set: not pausing a server this demo does not own; releasing instead');
  await lease.release();
}
await job;
await dog.stop();
await locks.close();
redis.disconnect();
await server?.stop();
