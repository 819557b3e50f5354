// Automatic renewal, then a lease-lost alert: Redis is paused (SIGSTOP) while a
// long job holds the lock, and the job is aborted through lease.signal before
// the server-side expiry.
import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { connect, printEvents, withRedis } from '../shared/redis.mjs';

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

await withRedis(async (url, server) => {
  const redis = await connect(url, { maxRetriesPerRequest: 1 }); // ioredis's new Redis(url, options)
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
  // The job stops when the lease is lost (lease.signal) or when we are done with it: a release
  // does not abort lease.signal, so the job needs a stop of its own.
  const done = new AbortController();
  const job = longJob(AbortSignal.any([lease.signal, done.signal]));

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
    await job;
  } else {
    console.log('REDIS_URL is set: not pausing a server this demo does not own; stopping the job and releasing instead');
    done.abort(new Error('finished, releasing the lock'));
    await job;
    await lease.release();
  }
  await dog.stop();
  await locks.close();
  redis.disconnect();
});
