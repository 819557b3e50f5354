import { hostname } from 'node:os';
import { LockClient } from '@holdfast/core';
import { CLIENT_ID_LENGTH, parseClientRecord, registrationKey } from '@holdfast/core/workspace';
import { commandStats, commandStatsDelta, lockFields, startRedis, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

describe('client registration', () => {
  const fx = useRedis();

  it('registers the client once, at its first acquisition, as the holder people read', async () => {
    const redis = await fx.redis();
    const locks = await fx.client({ name: 'billing-worker' });
    const key = registrationKey(fx.prefix, locks.id);
    expect(await redis.exists(key)).toBe(0);
    const lease = await locks.lock('who').acquire();
    // Sent ahead of the acquisition on the same connection: there by its reply.
    const record = parseClientRecord(await redis.get(key));
    expect(record).toEqual({ name: 'billing-worker', host: hostname(), pid: process.pid, startedAt: expect.any(Number) });
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
    // The owner ids in the lock start with the client id: that is the whole join.
    const owners = Object.keys(await lockFields(redis, locks.lock('who').keys.lock)).filter((field) => !field.startsWith('@'));
    expect(owners.map((owner) => owner.slice(0, CLIENT_ID_LENGTH))).toEqual([locks.id]);
    await lease.release();
  });

  it('writes once per client, not per acquisition (of any kind)', async () => {
    const server = await startRedis();
    try {
      const admin = server.client();
      const locks = new LockClient(server.client(), { prefix: 'once' });
      const before = await commandStats(admin);
      for (let i = 0; i < 20; i++) await (await locks.lock(`n${i % 4}`).acquire()).release();
      await locks.semaphore('s', { permits: 1 }).withLock(() => undefined);
      const delta = commandStatsDelta(before, await commandStats(admin));
      // 20 from take.lua (a free lock's first hold is one SET … PX), 1 the registration.
      expect(delta['set']).toBe(21);
      await locks.close();
    } finally {
      await server.stop();
    }
  });

  it('deletes its registration at close() (a closed client is nobody\'s holder any more)', async () => {
    const redis = await fx.redis();
    const own = await fx.redis();
    const locks = await fx.client({ name: 'short-lived' }, own);
    const key = registrationKey(fx.prefix, locks.id);
    await (await locks.lock('bye').acquire()).release();
    expect(await redis.exists(key)).toBe(1);
    await locks.close();
    // Sent by close(), not awaited by it.
    await waitFor(async () => (await redis.exists(key)) === 0);
  });

  it('a client that never acquired deletes nothing at close()', async () => {
    const redis = await fx.redis();
    const own = await fx.redis();
    const locks = await fx.client({}, own);
    // Not holdfast's: a key at the registration's name that this client never wrote stays.
    const key = registrationKey(fx.prefix, locks.id);
    await redis.set(key, 'someone else');
    await locks.close();
    // Whatever close() sent on its connection was answered before a command sent after it.
    await own.ping();
    expect(await redis.get(key)).toBe('someone else');
    await redis.del(key);
  });

  it('rejects a name that is not a string with the usual phrasing', async () => {
    await expect(fx.client({ name: 42 as never })).rejects.toThrow('Expected `name` to be a string, got `42`');
  });
});
