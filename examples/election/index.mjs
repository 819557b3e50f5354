// Leader election: three instances campaign for `scheduler`; one leads at a time, publishing its
// address, and the others wait in line. An observer follows every change. The leader resigns and
// the next in line leads at once; that one then dies without resigning, and the third leads once
// its term has run out. Each term's epoch is a fencing token: greater than every earlier term's.
import { LockClient } from '@holdfast/core';
import { connect, printEvents, withRedis } from '../shared/redis.mjs';

const TERM_MS = 1_000;

await withRedis(async (url) => {
  const instances = await Promise.all(
    ['web-1', 'web-2', 'web-3'].map(async (name) => {
      const redis = await connect(url); // ioredis's new Redis(url): see ../shared/redis.mjs
      const locks = new LockClient(redis, { prefix: 'example', name });
      printEvents(locks, name);
      return { name, redis, locks, election: locks.election('scheduler', { termMs: TERM_MS }) };
    }),
  );

  // Anyone can follow the election, candidate or not.
  const watcherRedis = await connect(url);
  const watcher = new LockClient(watcherRedis, { prefix: 'example' });
  const stop = new AbortController();
  const changes = [];
  const observing = (async () => {
    for await (const leader of watcher.election('scheduler').observe({ signal: stop.signal })) {
      changes.push(leader);
      console.log(`observer: ${leader ? `${leader.value} leads (epoch ${leader.epoch})` : 'nobody leads'}`);
    }
  })();

  const seen = async (test) => {
    while (!test(changes.at(-1))) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  const [web1, web2, web3] = instances;
  const term1 = await web1.election.campaign({ value: 'web-1:8080' });
  console.log(`web-1 elected, epoch ${term1.epoch}`);
  // The others stand too, and wait in line (first come, first served).
  const term2Promise = web2.election.campaign({ value: 'web-2:8080' });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const term3Promise = web3.election.campaign({ value: 'web-3:8080' });
  await new Promise((resolve) => setTimeout(resolve, 50));

  await term1.proclaim('web-1:9090'); // moved to another port: observers see it
  console.log('leader now:', JSON.stringify(await watcher.election('scheduler').leader()));

  let started = performance.now();
  await term1.resign();
  const term2 = await term2Promise;
  console.log(`web-2 elected ${Math.round(performance.now() - started)} ms after web-1 resigned, epoch ${term2.epoch}`);

  // web-2's process dies: its client closes without resigning, as a crash would. The term stays
  // in Redis until it runs out; then the next in line leads.
  term2.signal.addEventListener('abort', () => console.log(`web-2's term signal aborted: ${term2.signal.reason.code}`));
  started = performance.now();
  await web2.locks.close();
  const term3 = await term3Promise;
  console.log(`web-3 elected ${Math.round(performance.now() - started)} ms after web-2 died (term ${TERM_MS} ms), epoch ${term3.epoch}`);
  console.log('epochs increase:', term1.epoch < term2.epoch && term2.epoch < term3.epoch);

  // The observer reads the state on each announcement: let it see web-3 before it resigns.
  await seen((leader) => leader?.epoch === term3.epoch);
  await term3.resign();
  await seen((leader) => leader === null);
  stop.abort();
  await observing;
  console.log('leader at the end:', await watcher.election('scheduler').leader());

  await watcher.close();
  for (const { locks } of instances) await locks.close();
  for (const redis of [watcherRedis, ...instances.map((i) => i.redis)]) redis.disconnect();
});
