import { EvictionPolicyError, LockClient, fencedWrite, readFenced } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import { startRedis, startRedisServers, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import { Redis, type RedisOptions } from 'ioredis6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * RESP3 as ioredis 6 can deliver it. Its default (`protocol: 3`, `replyMapping: 'legacy'`) is
 * what the whole ioredis 6 pass runs on; `replyMapping: 'resp3'` turns map replies into objects
 * and doubles into numbers, alone or with `stringNumbers`. ioredis 5 and iovalkey 0.4 have no
 * `protocol` option (RESP2 only), so this file imports ioredis 6 itself and runs once.
 */
const configurations: [string, RedisOptions][] = [
  ['replyMapping resp3', { protocol: 3, replyMapping: 'resp3' }],
  ['replyMapping resp3 and stringNumbers', { protocol: 3, replyMapping: 'resp3', stringNumbers: true }],
];

const opened: Redis[] = [];
function connect(server: RedisServer, options: RedisOptions): Redis {
  const client = new Redis(server.url, options);
  client.on('error', () => undefined);
  opened.push(client);
  return client;
}

let servers: RedisServer[];
let evicting: RedisServer;
beforeAll(async () => {
  [servers, evicting] = await Promise.all([
    startRedisServers(3),
    startRedis({ args: ['--maxmemory', '200mb', '--maxmemory-policy', 'allkeys-lru'] }),
  ]);
}, 60_000);
afterAll(async () => {
  for (const client of opened.splice(0)) client.disconnect();
  await Promise.all([...(servers ?? []), ...(evicting ? [evicting] : [])].map((server) => server.stop()));
});

describe.each(configurations)('ioredis 6 with %s', (_, options) => {
  it('is a RESP3 connection whose map replies arrive as objects', async () => {
    const redis = connect(servers[0]!, options);
    expect(await redis.client('INFO')).toContain('resp=3');
    expect(await redis.config('GET', 'maxmemory-policy')).toEqual({ 'maxmemory-policy': 'noeviction' });
  });

  it('LockClient: re-entry, extend, inspect, hand-off by release message, fencing, forceRelease', async () => {
    const a = new LockClient(connect(servers[0]!, options), { prefix: 'resp3' });
    const b = new LockClient(connect(servers[0]!, options), { prefix: 'resp3' });
    const errors: unknown[] = [];
    a.on('error', (error) => errors.push(error));
    b.on('error', (error) => errors.push(error));
    const name = uniqueName('job');
    const lock = a.lock(name);

    const counts = await lock.withLock(async (outer) => {
      const inner = await lock.acquire();
      await inner.release();
      return [outer.holdCount, inner.holdCount, typeof outer.token];
    });
    expect(counts).toEqual([1, 2, 'number']);

    const held = await lock.acquire({ leaseMs: 30_000 });
    await held.extend(40_000);
    expect(await lock.currentToken()).toBe(held.token);
    expect(await lock.remainingTtlMs()).toBeGreaterThan(30_000);
    expect(await b.lock(name).tryAcquire()).toBeNull();
    // 30 s lease, 10 s wait: only the release message can hand the lock over in time.
    const waiting = b.lock(name).acquire({ waitMs: 10_000 });
    const admin = servers[0]!.client();
    await waitFor(async () => (await admin.pubsub('SHARDNUMSUB', lock.keys.channel))[1] === 1);
    await held.release();
    const next = await waiting;
    expect(next.token).toBeGreaterThan(held.token);

    const resource = connect(servers[1]!, options);
    const key = uniqueName('fenced');
    expect(await fencedWrite(resource, key, next.token, 'v1')).toBe(true);
    expect(await fencedWrite(resource, key, held.token, 'stale')).toBe(false);
    expect(await readFenced(resource, key)).toEqual({ token: next.token, value: 'v1' });
    expect(await b.lock(name).forceRelease()).toBe(true);
    expect(await lock.isLocked()).toBe(false);
    expect(errors).toEqual([]);
    await a.close();
    await b.close();
  });

  it('Watchdog: keeps a lease past twice its length', async () => {
    const locks = new LockClient(connect(servers[0]!, options), { prefix: 'resp3' });
    const dog = new Watchdog(locks, { timeoutMs: 600 });
    const lost: unknown[] = [];
    locks.on('lost', (event) => lost.push(event));
    let renewals = 0;
    dog.on('renewed', () => renewals++);
    const lock = locks.lock(uniqueName('renewed'));
    const lease = await lock.acquire();
    // Six renewals, 200 ms apart at the least: past twice the 600 ms lease, held by renewal alone.
    await waitFor(() => renewals >= 6, { timeoutMs: 20_000 });
    expect(lease.isHeld).toBe(true);
    expect(await lock.remainingTtlMs()).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    await lease.release();
    await dog.stop();
    await locks.close();
  });

  it('Redlock: quorum acquisition, extension and release', async () => {
    const redlock = new Redlock(servers.map((server) => connect(server, options)), { prefix: 'resp3' });
    const rival = new Redlock(servers.map((server) => connect(server, options)), { prefix: 'resp3' });
    redlock.on('error', () => undefined);
    rival.on('error', () => undefined);
    const name = uniqueName('quorum');
    const lease = await redlock.lock(name).acquire({ leaseMs: 30_000 });
    expect(await rival.lock(name).tryAcquire()).toBeNull();
    await lease.extend(30_000);
    expect(await rival.lock(name).isLocked()).toBe(true);
    await lease.release();
    const next = await rival.lock(name).acquire();
    expect(next.token).toBeGreaterThan(lease.token);
    await next.release();
    await redlock.close();
    await rival.close();
  });

  it('the eviction check reads INFO: a server that evicts is refused', async () => {
    const locks = new LockClient(connect(evicting, options), { prefix: 'resp3' });
    await expect(locks.lock(uniqueName('evicted')).tryAcquire()).rejects.toBeInstanceOf(EvictionPolicyError);
    await locks.close();
  });
});
