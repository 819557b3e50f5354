import { lockKeys, portOf, replies, runScript, scripts, slotOf } from '@holdfast/core/internal';
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/** Direct calls of the Lua scripts: their contracts, without the client around them. */
describe('script contracts', () => {
  const fx = useRedis();
  let redis: Redis;
  beforeAll(async () => {
    redis = await fx.redis();
  });

  const keysOf = (name: string) => lockKeys(fx.prefix, name);
  const all = (k: ReturnType<typeof keysOf>) => [k.lock, k.queue, k.waiters, k.fence];
  const acquire = async (name: string, owner: string, req: string, mode = 'try', leaseMs = 5000) => {
    const k = keysOf(name);
    return replies.acquireReply(
      await runScript(portOf(redis)!, scripts.acquire, all(k), [owner, leaseMs, req, mode, 1000, k.channel]),
      leaseMs,
    );
  };
  const release = async (name: string, owner: string, req: string) => {
    const k = keysOf(name);
    return replies.releaseReply(await runScript(portOf(redis)!, scripts.release, all(k), [owner, req, k.channel, 1000, '0']));
  };

  it('grants a free lock with hold count 1 and a token', async () => {
    const r = await acquire('c1', 'A', 'r1');
    expect(r).toMatchObject({ granted: true, holdCount: 1 });
    const hash = await redis.hgetall(keysOf('c1').lock);
    expect(hash['A']).toBe('1');
    expect(Number(hash['@r1'])).toBeGreaterThan(0);
  });

  it('counts re-entries of the same owner and keeps the token', async () => {
    const first = await acquire('c2', 'A', 'r1');
    const second = await acquire('c2', 'A', 'r2');
    expect(second).toMatchObject({ granted: true, holdCount: 2 });
    if (first.granted && second.granted) expect(second.token).toBe(first.token);
  });

  it('answers busy with the holder pttl to another owner', async () => {
    await acquire('c3', 'A', 'r1', 'try', 5000);
    const r = await acquire('c3', 'B', 'r2');
    expect(r.granted).toBe(false);
    if (!r.granted && 'retryAfterMs' in r) {
      expect(r.retryAfterMs).toBeGreaterThan(4000);
      expect(r.retryAfterMs).toBeLessThanOrEqual(5000);
    }
  });

  it('does not count a resent request twice', async () => {
    await acquire('c4', 'A', 'r1');
    await acquire('c4', 'A', 'r2');
    const again = await acquire('c4', 'A', 'r2');
    expect(again).toMatchObject({ granted: true, holdCount: 2 });
    expect(await redis.hget(keysOf('c4').lock, 'A')).toBe('2');
    const rel = await release('c4', 'A', 'r3');
    const relAgain = await release('c4', 'A', 'r3');
    expect(rel).toEqual({ ok: true, remaining: 1 });
    expect(relAgain).toEqual({ ok: true, remaining: 1 });
  });

  it('keeps one token field, named by the last request, through re-entries, releases and a cancel', async () => {
    const k = keysOf('c4b');
    const first = await acquire('c4b', 'A', 'r1');
    await acquire('c4b', 'A', 'r2');
    await acquire('c4b', 'A', 'r3');
    expect(await redis.hgetall(k.lock)).toEqual({ A: '3', '@r3': String(first.granted && first.token) });
    await release('c4b', 'A', 'r4');
    expect(await redis.hgetall(k.lock)).toEqual({ A: '2', '@r4': String(first.granted && first.token) });
    // A cancelled re-entry is undone and no request is recognised any more; the token stays.
    await acquire('c4b', 'A', 'r5');
    const cancel = (req: string) => runScript(portOf(redis)!, scripts.cancel, all(k), ['A', req, k.channel, 1000]);
    expect(await cancel('r5')).toBe(1);
    expect(await cancel('r5')).toBe(0);
    expect(await redis.hgetall(k.lock)).toEqual({ A: '2', '@': String(first.granted && first.token) });
    expect(replies.inspectReply(await runScript(portOf(redis)!, scripts.inspect, [k.lock], []))).toMatchObject({
      token: first.granted && first.token,
    });
    expect(await acquire('c4b', 'A', 'r6')).toMatchObject({ granted: true, holdCount: 3 });
  });

  it('refuses a release by another owner and reports a missing lock', async () => {
    await acquire('c5', 'A', 'r1');
    expect(await release('c5', 'B', 'r2')).toEqual({ ok: false, reason: 'taken' });
    expect(await release('c5-missing', 'B', 'r3')).toEqual({ ok: false, reason: 'deleted' });
    expect(await redis.hget(keysOf('c5').lock, 'A')).toBe('1');
  });

  it('publishes on full release only, and deletes the hash', async () => {
    const k = keysOf('c6');
    const sub = await fx.redis();
    const messages: string[] = [];
    // Redis 7: the scripts publish on the lock's shard channel.
    sub.on('smessage', (_c: string, m: string) => messages.push(m));
    await sub.ssubscribe(k.channel);
    await acquire('c6', 'A', 'r1');
    await acquire('c6', 'A', 'r2');
    await release('c6', 'A', 'r3');
    await redis.ping();
    expect(messages).toEqual([]);
    await release('c6', 'A', 'r4');
    await new Promise((r) => setTimeout(r, 50));
    expect(messages).toEqual(['f']);
    expect(await redis.exists(k.lock)).toBe(0);
  });

  it('hands the lock to the first queued waiter on release, FIFO', async () => {
    const k = keysOf('c7');
    await acquire('c7', 'A', 'r1');
    expect((await acquire('c7', 'B', 'wB', 'join')).granted).toBe(false);
    expect((await acquire('c7', 'C', 'wC', 'join')).granted).toBe(false);
    expect(await redis.lrange(k.queue, 0, -1)).toEqual(['wB', 'wC']);
    await release('c7', 'A', 'r2');
    const hash = await redis.hgetall(k.lock);
    expect(hash['B']).toBe('1');
    expect(hash['@c']).toBe('1');
    expect(await redis.pttl(k.lock)).toBeLessThanOrEqual(1000);
    // A newcomer does not barge in ahead of the queue.
    expect((await acquire('c7', 'D', 'rD')).granted).toBe(false);
    // The waiter confirms with its own request id: no double count, full lease.
    const confirmed = await acquire('c7', 'B', 'wB', 'join', 5000);
    expect(confirmed).toMatchObject({ granted: true, holdCount: 1 });
    expect(await redis.hexists(k.lock, '@c')).toBe(0);
    expect(await redis.pttl(k.lock)).toBeGreaterThan(4000);
  });

  it('the short paths (free lock, last hold, nobody queued) agree with the general ones', async () => {
    // An owner id over 64 bytes turns the hash into a hashtable, whose field order is not insertion order.
    for (const owner of ['A', 'o'.repeat(80)]) {
      const k = keysOf(`c7b-${owner.length}`);
      const first = await acquire(`c7b-${owner.length}`, owner, 'r1', 'try', 5000);
      expect(first).toMatchObject({ granted: true, holdCount: 1 });
      expect(await redis.pttl(k.lock)).toBeGreaterThan(4000);
      // Only the owner's last hold frees the lock; its token field says which request came last.
      expect(await release(`c7b-${owner.length}`, 'B', 'r2')).toEqual({ ok: false, reason: 'taken' });
      expect(await release(`c7b-${owner.length}`, owner, 'r3')).toEqual({ ok: true, remaining: 0 });
      expect(await redis.exists(k.lock)).toBe(0);
      // The next one gets a greater token from the same counter.
      const second = await acquire(`c7b-${owner.length}`, owner, 'r4');
      expect(second.granted && first.granted && second.token > first.token).toBe(true);
      await acquire(`c7b-${owner.length}`, owner, 'r5');
      const dropAll = await runScript(portOf(redis)!, scripts.release, all(k), [owner, 'r6', k.channel, 1000, '1']);
      expect(replies.releaseReply(dropAll)).toEqual({ ok: true, remaining: 0 });
      expect(await redis.exists(k.lock)).toBe(0);
      // The client's last release sends no 5th argument: every hold goes, as with '1'.
      await acquire(`c7b-${owner.length}`, owner, 'r7');
      await acquire(`c7b-${owner.length}`, owner, 'r8');
      expect(replies.releaseReply(await runScript(portOf(redis)!, scripts.release, all(k), [owner, 'r9', k.channel, 1000, '0']))).toEqual({
        ok: true,
        remaining: 1,
      });
      await acquire(`c7b-${owner.length}`, owner, 'r10');
      const lastRelease = await runScript(portOf(redis)!, scripts.release, all(k), [owner, 'r11', k.channel, 1000]);
      expect(replies.releaseReply(lastRelease)).toEqual({ ok: true, remaining: 0 });
      expect(await redis.exists(k.lock)).toBe(0);
    }
    // A free lock with a live queue entry (the holder's key expired): a newcomer
    // does not take it, the head of the queue is handed it.
    await acquire('c7c', 'A', 'r1');
    await acquire('c7c', 'B', 'wB', 'join');
    await redis.del(keysOf('c7c').lock);
    expect((await acquire('c7c', 'C', 'rC')).granted).toBe(false);
    expect(await redis.hget(keysOf('c7c').lock, 'B')).toBe('1');
  });

  it('cancel removes a queue entry and undoes an unconfirmed hand-off', async () => {
    const k = keysOf('c8');
    await acquire('c8', 'A', 'r1');
    await acquire('c8', 'B', 'wB', 'join');
    await release('c8', 'A', 'r2');
    expect(await redis.hget(k.lock, 'B')).toBe('1');
    const undone = await runScript(portOf(redis)!, scripts.cancel, all(k), ['B', 'wB', k.channel, 1000]);
    expect(undone).toBe(1);
    expect(await redis.exists(k.lock)).toBe(0);
    expect(await redis.llen(k.queue)).toBe(0);
  });

  it('re-entry mode never grants a fresh lock', async () => {
    const r = await acquire('c9', 'A', 'r1', 'reenter');
    expect(r).toEqual({ granted: false, lost: 'deleted' });
    expect(await redis.exists(keysOf('c9').lock)).toBe(0);
  });

  it('renew extends only holds still ours and reports the rest', async () => {
    await acquire('c10a', 'A', 'r1', 'try', 1000);
    await acquire('c10b', 'X', 'r2', 'try', 1000);
    const reply = await runScript(
      portOf(redis)!,
      scripts.renew,
      [keysOf('c10a').lock, keysOf('c10b').lock, keysOf('c10c').lock],
      [9000, 'A A A'],
    );
    expect(replies.renewReply(reply, 3)).toEqual([undefined, 'taken', 'deleted']);
    // One owner id per key, or nothing is renewed.
    await expect(runScript(portOf(redis)!, scripts.renew, [keysOf('c10a').lock, keysOf('c10b').lock], [9000, 'A'])).rejects.toThrow(
      /2 keys but 1 owner ids/,
    );
    expect(await redis.pttl(keysOf('c10a').lock)).toBeGreaterThan(8000);
    expect(await redis.pttl(keysOf('c10b').lock)).toBeLessThanOrEqual(1000);
    expect(await redis.exists(keysOf('c10c').lock)).toBe(0);
  });

  it('release-all drops every hold of the owner and hands the lock to the head of the queue, publishing nothing when nobody is queued', async () => {
    const port = portOf(redis)!;
    const releaseAll = async (name: string, owner: string) => {
      const k = keysOf(name);
      return replies.releaseReply(await runScript(port, scripts.releaseAll, all(k), [owner, `1000|${k.channel}`]));
    };
    const k = keysOf('t5');
    const sub = await fx.redis();
    const messages: string[] = [];
    sub.on('smessage', (_c: string, m: string) => messages.push(m));
    await sub.ssubscribe(k.channel);
    await acquire('t5', 'A', 'r1');
    await acquire('t5', 'A', 'r2');
    expect(await releaseAll('t5', 'B')).toEqual({ ok: false, reason: 'taken' });
    expect(await releaseAll('t5', 'A')).toEqual({ ok: true, remaining: 0 });
    expect(await redis.exists(k.lock)).toBe(0);
    expect(await releaseAll('t5', 'A')).toEqual({ ok: false, reason: 'deleted' });
    await acquire('t5', 'A', 'r3');
    expect((await acquire('t5', 'W', 'w1', 'join')).granted).toBe(false);
    expect(await releaseAll('t5', 'A')).toEqual({ ok: true, remaining: 0 });
    const hash = await redis.hgetall(k.lock);
    expect(hash['W']).toBe('1');
    expect(hash['@c']).toBe('1');
    expect(await redis.pttl(k.lock)).toBeLessThanOrEqual(1000);
    await new Promise((r) => setTimeout(r, 50));
    expect(messages).toHaveLength(1);
    expect(messages[0]!.startsWith('h|w1|1000|')).toBe(true);
    const f = keysOf('t6');
    await redis.hset(f.lock, 'x', 'y');
    expect(await releaseAll('t6', 'A')).toEqual({ ok: false, reason: 'taken' });
    expect(await redis.hgetall(f.lock)).toEqual({ x: 'y' });
  });

  it('lock keys use at most 256 slots (one per fencing counter), and the slot is the one Redis Cluster computes for the tag', () => {
    const FENCE_BUCKETS = 256;
    const slots = new Set<number>();
    for (let i = 0; i < 5000; i++) {
      const k = keysOf(`spread-${i}`);
      const tag = k.lock.slice(k.lock.indexOf('{') + 1, k.lock.indexOf('}'));
      expect(slotOf(tag)).toBe(k.slot);
      slots.add(k.slot);
    }
    expect(slots.size).toBeLessThanOrEqual(FENCE_BUCKETS);
    expect(slots.size).toBeGreaterThan(FENCE_BUCKETS * 0.9);
    // Spread evenly over the slot range, so over every node of a cluster.
    expect(Math.min(...slots)).toBeLessThan(16384 / FENCE_BUCKETS);
    expect(Math.max(...slots)).toBeGreaterThanOrEqual(16384 - 16384 / FENCE_BUCKETS);
  });

  it('every key of a lock shares one hash slot, braces in the name included', () => {
    for (const name of ['plain', 'a{b}c', '{x}', '}{', 'ünïcødé', 'x'.repeat(1000)]) {
      const k = keysOf(name);
      const tags = [k.lock, k.queue, k.waiters, k.fence, k.channel].map((key) => key.slice(key.indexOf('{'), key.indexOf('}') + 1));
      expect(new Set(tags).size).toBe(1);
    }
  });
});
