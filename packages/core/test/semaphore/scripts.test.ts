import { PermitCountMismatchError, replies, runScript, semaphoreKeys, semaphoreScripts, slotOf, portOf } from '@holdfast/core/workspace';
import type { Redis } from 'ioredis';
import { semaphoreAcquireReply, semaphoreInspectReply } from '../../src/semaphore/semaphore-calls.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/** Direct calls of the semaphore scripts: their contracts, without the client around them. */
describe('semaphore script contracts', () => {
  const fx = useRedis();
  let redis: Redis;
  beforeAll(async () => {
    redis = await fx.redis();
  });

  const keysOf = (name: string) => semaphoreKeys(fx.prefix, name);
  const all = (k: ReturnType<typeof keysOf>) => [k.lock, k.expiry, k.queue, k.waiters, k.fence];
  const acquire = async (name: string, owner: string, req: string, o: { mode?: string; permits?: number; count?: number; leaseMs?: number } = {}) => {
    const k = keysOf(name);
    const args = [owner, o.leaseMs ?? 5000, req, o.mode ?? 'try', o.permits ?? 1, o.count ?? 3, 1000, k.channel, 1000];
    return semaphoreAcquireReply(await runScript(portOf(redis)!, semaphoreScripts.acquire, all(k), args), name, o.count ?? 3);
  };
  const release = async (name: string, owner: string, req = '') => {
    const k = keysOf(name);
    return replies.releaseReply(await runScript(portOf(redis)!, semaphoreScripts.release, all(k), [owner, k.channel, 1000, req]));
  };
  const inspect = async (name: string, newCount: number | '' = '') => {
    const k = keysOf(name);
    return semaphoreInspectReply(await runScript(portOf(redis)!, semaphoreScripts.inspect, all(k), [k.channel, 1000, newCount]));
  };

  it('keeps every key of a semaphore in one hash slot, apart from a lock of the same name', () => {
    const k = keysOf('slot{x}:name');
    const tag = (key: string) => key.slice(key.indexOf('{') + 1, key.indexOf('}'));
    const slots = new Set(all(k).map((key) => slotOf(tag(key))));
    expect(slots.size).toBe(1);
    expect(k.lock).toContain(':sem:');
  });

  it('grants, counts, and answers a resend with the same grant', async () => {
    const first = await acquire('s1', 'A', 'r1', { permits: 2 });
    expect(first).toMatchObject({ granted: true, holdCount: 1 });
    const resend = await acquire('s1', 'A', 'r1', { permits: 2 });
    expect(resend).toEqual(first);
    expect(await inspect('s1')).toEqual({ foreign: false, stored: 3, used: 2, previous: 3 });
    expect(await acquire('s1', 'B', 'r2', { permits: 2 })).toMatchObject({ granted: false });
    const third = await acquire('s1', 'C', 'r3', { permits: 1 });
    expect(third.granted && first.granted && third.token > first.token).toBe(true);
    expect(await release('s1', 'A')).toEqual({ ok: true, remaining: 0 });
    expect(await release('s1', 'A')).toEqual({ ok: false, reason: 'deleted' });
    expect(await inspect('s1')).toMatchObject({ used: 1 });
  });

  it('refuses another count with {-4} (PermitCountMismatchError), never admitting more', async () => {
    await acquire('s2', 'A', 'r1', { count: 2 });
    await expect(acquire('s2', 'B', 'r2', { count: 5 })).rejects.toBeInstanceOf(PermitCountMismatchError);
    expect(await inspect('s2')).toMatchObject({ stored: 2, used: 1 });
    expect(await inspect('s2', 5)).toMatchObject({ stored: 5, used: 1, previous: 2 });
  });

  it('purges holders whose lease ended by server time before counting', async () => {
    await acquire('s3', 'A', 'r1', { permits: 3, leaseMs: 1 });
    await redis.zadd(keysOf('s3').expiry, 1, 'A'); // its lease ended long ago
    expect(await inspect('s3')).toEqual({ foreign: false, stored: 3, used: 0, previous: 3 });
    expect(await redis.hexists(keysOf('s3').lock, 'A')).toBe(0);
  });

  it('queues in join mode, serves the head first, and hands off by message on release', async () => {
    await acquire('s4', 'A', 'r1', { permits: 2 });
    const queued = await acquire('s4', 'B', 'r2', { permits: 3, mode: 'join' });
    expect(queued).toMatchObject({ granted: false });
    expect(queued.granted === false && 'serverMs' in queued && queued.serverMs! > 0).toBe(true);
    // One permit is free, but B is ahead: C must wait.
    expect(await acquire('s4', 'C', 'r3', { permits: 1 })).toMatchObject({ granted: false });
    expect(await redis.lrange(keysOf('s4').queue, 0, -1)).toEqual(['r2']);
    await release('s4', 'A');
    // Handed to B under a claim, before B asked again; its confirmation gives the full lease.
    expect(await redis.hget(keysOf('s4').lock, 'B')).toMatch(/^3\|\d+$/);
    expect(await redis.llen(keysOf('s4').queue)).toBe(0);
    expect(await acquire('s4', 'B', 'r2', { permits: 3, mode: 'confirm' })).toMatchObject({ granted: true });
    expect(await acquire('s4', 'Z', 'r9', { mode: 'confirm' })).toEqual({ granted: false, lost: 'deleted' });
  });

  it('a cancelled wait leaves the queue and unblocks those behind it', async () => {
    await acquire('s5', 'A', 'r1', { permits: 2 });
    await acquire('s5', 'B', 'r2', { permits: 3, mode: 'join' });
    await acquire('s5', 'C', 'r3', { permits: 1, mode: 'join' });
    await release('s5', 'B', 'r2');
    expect(await redis.hget(keysOf('s5').lock, 'C')).toMatch(/^1\|\d+$/);
    expect(await inspect('s5')).toMatchObject({ used: 3 });
  });

  it('reads a semaphore of the previous layout (no sum of permits in use) and adds the sum once', async () => {
    const k = keysOf('s10');
    const [seconds] = await redis.time();
    await redis.hset(k.lock, '#', 3, 'A', '2|5', '+', 9);
    await redis.zadd(k.expiry, Number(seconds) * 1000 + 30_000, 'A');
    expect(await acquire('s10', 'B', 'r1', { permits: 2 })).toMatchObject({ granted: false });
    expect(await redis.hget(k.lock, '=')).toBe('2');
    expect(await redis.hexists(k.lock, '+')).toBe(0);
    expect(await acquire('s10', 'C', 'r2', { permits: 1 })).toMatchObject({ granted: true });
    expect(await inspect('s10')).toEqual({ foreign: false, stored: 3, used: 3, previous: 3 });
    expect(await release('s10', 'A')).toEqual({ ok: true, remaining: 0 });
    expect(await inspect('s10')).toMatchObject({ used: 1 });
  });

  it('extends and renews only a holder whose lease still runs, and leaves foreign data alone', async () => {
    const k = keysOf('s6');
    await acquire('s6', 'A', 'r1');
    const extend = (owner: string) => runScript(portOf(redis)!, semaphoreScripts.extend, [k.lock, k.expiry], [owner, 60_000]);
    expect(replies.extendReply(await extend('A'))).toEqual({ ok: true });
    expect(replies.extendReply(await extend('B'))).toEqual({ ok: false, reason: 'deleted' });
    const renew = await runScript(portOf(redis)!, semaphoreScripts.renew, [k.expiry, k.expiry], [30_000, 'A B']);
    expect(replies.renewReply(renew, 2)).toEqual([undefined, 'deleted']);
    const foreign = keysOf('s7');
    await redis.set(foreign.lock, 'not ours');
    await redis.set(foreign.expiry, 'not ours');
    await expect(acquire('s7', 'A', 'r1')).resolves.toEqual({ granted: false, conflict: true });
    expect(await release('s7', 'A')).toEqual({ ok: false, reason: 'taken' });
    expect(await inspect('s7')).toEqual({ foreign: true });
    const renewForeign = await runScript(portOf(redis)!, semaphoreScripts.renew, [foreign.expiry], [30_000, 'A']);
    expect(replies.renewReply(renewForeign, 1)).toEqual(['taken']);
    expect(await redis.get(foreign.lock)).toBe('not ours');
  });

  it('refuses a queue or a waiter table holding data it did not write, in every script that reads them, before writing anything', async () => {
    const force = async (name: string) => {
      const k = keysOf(name);
      return replies.forceReleaseReply(await runScript(portOf(redis)!, semaphoreScripts.forceRelease, all(k), [k.channel, 1000]));
    };
    const plants = [
      // The queue another type; the waiter table another type while a waiter is queued.
      ['queue', (_: string, k: ReturnType<typeof keysOf>) => redis.set(k.queue, 'not ours')],
      ['waiters', async (name: string, k: ReturnType<typeof keysOf>) => {
        await acquire(name, 'C', 'r3', { permits: 3, mode: 'join' });
        await redis.del(k.waiters);
        await redis.set(k.waiters, 'not ours');
      }],
    ] as const;
    for (const [where, plant] of plants) {
      const name = `foreign-${where}`;
      const k = keysOf(name);
      // A live holder, and one whose lease ended: every call would purge it first.
      await acquire(name, 'A', 'r1', { permits: 2, leaseMs: 60_000 });
      await acquire(name, 'B', 'r2', { permits: 1, leaseMs: 60_000 });
      await redis.zadd(k.expiry, 1, 'B');
      await plant(name, k);
      const state = async () => Promise.all(all(k).map((key) => redis.dump(key)));
      const before = await state();
      expect(await acquire(name, 'D', 'r4'), where).toEqual({ granted: false, conflict: true });
      expect(await acquire(name, 'D', 'r4', { mode: 'join' }), where).toEqual({ granted: false, conflict: true });
      expect(await release(name, 'A'), where).toEqual({ ok: false, reason: 'taken' });
      expect(await release(name, 'A', 'r3'), where).toEqual({ ok: false, reason: 'taken' });
      expect(await inspect(name), where).toEqual({ foreign: true });
      expect(await inspect(name, 5), where).toEqual({ foreign: true });
      expect(await force(name), where).toEqual({ removed: false, foreign: true });
      expect(await state(), where).toEqual(before);
    }
  });

  it("force-release takes every holder's permits back, keeps the count, and serves the queue in order", async () => {
    const k = keysOf('s8');
    const force = async (name: string) => {
      const keys = keysOf(name);
      return replies.forceReleaseReply(await runScript(portOf(redis)!, semaphoreScripts.forceRelease, all(keys), [keys.channel, 1000]));
    };
    expect(await force('s8')).toEqual({ removed: false, foreign: false });
    expect(await redis.exists(k.lock)).toBe(0);
    await acquire('s8', 'A', 'r1', { permits: 2 });
    await acquire('s8', 'B', 'r2', { permits: 1 });
    await acquire('s8', 'C', 'r3', { permits: 3, mode: 'join' });
    await acquire('s8', 'D', 'r4', { permits: 1, mode: 'join' });
    expect(await force('s8')).toEqual({ removed: true, foreign: false });
    // C (3 permits) was at the head and now fits; D waits behind it.
    expect(await redis.hget(k.lock, 'A')).toBeNull();
    expect(await redis.hget(k.lock, 'B')).toBeNull();
    expect(await redis.hget(k.lock, 'C')).toMatch(/^3\|\d+$/);
    expect(await redis.lrange(k.queue, 0, -1)).toEqual(['r4']);
    expect(await inspect('s8')).toEqual({ foreign: false, stored: 3, used: 3, previous: 3 });
    expect(await release('s8', 'A')).toEqual({ ok: false, reason: 'deleted' });
    // Only expired holders: nothing live was released.
    await release('s8', 'C');
    await redis.zadd(k.expiry, 1, 'D');
    await redis.hset(k.lock, 'D', '1|99', '=', 1);
    expect(await force('s8')).toEqual({ removed: false, foreign: false });
    expect(await inspect('s8')).toMatchObject({ stored: 3, used: 0 });
    await redis.set(keysOf('s9').lock, 'not ours');
    expect(await force('s9')).toEqual({ removed: false, foreign: true });
    expect(await redis.get(keysOf('s9').lock)).toBe('not ours');
  });
});
