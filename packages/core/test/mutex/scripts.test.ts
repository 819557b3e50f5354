import { lockKeys, portOf, releaseTakenReply, replies, runScript, scripts, slotOf, takeCall, takenPrefix } from '@holdfast/core/workspace';
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

  const take = async (name: string, owner: string, req: string) => {
    const call = takeCall(keysOf(name), owner, req, 5000);
    expect(call.args).toEqual([takenPrefix(owner, req), 5000]);
    return call.decode(await runScript(portOf(redis)!, call.script, call.keys, call.args));
  };

  it('take: a free lock in one call of 3 keys and 2 arguments, as a string; busy and foreign as acquire answers them; nil, writing nothing, for what acquire decides', async () => {
    const port = portOf(redis)!;
    const k = keysOf('t1');
    const taken = await take('t1', 'A', 'r1');
    expect(taken).toMatchObject({ granted: true, holdCount: 1, pttl: 5000, releaseHint: `A@r1|${taken?.granted && taken.token}` });
    // owner '@' request '|' token, with the lease as its TTL.
    expect(await redis.get(k.lock)).toBe(`A@r1|${taken?.granted && taken.token}`);
    expect(await redis.pttl(k.lock)).toBeGreaterThan(4000);
    // Held by another owner: busy, with the holder's lease left.
    expect(await take('t1', 'B', 'r2')).toMatchObject({ granted: false });
    // A resend of the applied take: acquire.lua recognises the request, and the lock stays a string.
    expect(await take('t1', 'A', 'r1')).toBeUndefined();
    expect(await acquire('t1', 'A', 'r1')).toMatchObject({ granted: true, holdCount: 1 });
    expect(await redis.type(k.lock)).toBe('string');
    // A waiter that queues turns it into the hash first, with the same hold, token and TTL.
    expect((await acquire('t1', 'W', 'w1', 'join')).granted).toBe(false);
    expect(await redis.hgetall(k.lock)).toEqual({ A: '1', '@r1': String(taken?.granted && taken.token) });
    expect(await redis.pttl(k.lock)).toBeGreaterThan(4000);
    // Free with a waiter queued: the hand-off is acquire.lua's; take wrote nothing.
    await redis.del(k.lock);
    expect(await take('t1', 'C', 'r3')).toBeUndefined();
    expect(await redis.exists(k.lock)).toBe(0);
    // Foreign data: refused, untouched.
    const f = keysOf('t2');
    await redis.set(f.lock, 'x');
    expect(await take('t2', 'A', 'r1')).toEqual({ granted: false, conflict: true });
    expect(await redis.get(f.lock)).toBe('x');
    // A second hold of the owner turns the string into the hash (its count).
    const h = keysOf('t8');
    const first = await take('t8', 'A', 'r1');
    expect(await acquire('t8', 'A', 'r2')).toMatchObject({ granted: true, holdCount: 2, token: first?.granted && first.token });
    expect(await redis.hgetall(h.lock)).toEqual({ A: '2', '@r2': String(first?.granted && first.token) });
    // A token from 1e14 on is printed with every digit (Lua's own printing would not), as the client prints it.
    const big = keysOf('t9');
    await redis.set(big.fence, '99999999999999');
    const bigTaken = await take('t9', 'A', 'r1');
    expect(bigTaken).toMatchObject({ granted: true, token: 100_000_000_000_000 });
    expect(await redis.get(big.lock)).toBe(bigTaken?.granted && bigTaken.releaseHint);
    expect(await redis.get(big.lock)).toBe('A@r1|100000000000000');
  });

  it('release-taken frees a string lock of its owner; a hash (a waiter queued, a second hold) it leaves to release-all, writing nothing; gone, taken and foreign as release answers them', async () => {
    const port = portOf(redis)!;
    const releaseTaken = async (name: string, value: string) => {
      const k = keysOf(name);
      return releaseTakenReply(await runScript(port, scripts.releaseTaken, [k.lock], [value]));
    };
    /** take, and the string lock it wrote: what release-taken.lua is sent. */
    const taken = async (name: string, owner: string, req: string) => {
      const reply = await take(name, owner, req);
      if (!reply?.granted || reply.releaseHint === undefined) throw new Error(`not granted: ${JSON.stringify(reply)}`);
      return reply.releaseHint;
    };
    const releaseAll = (k: ReturnType<typeof keysOf>, owner: string) => runScript(port, scripts.releaseAll, all(k), [owner, `1000|${k.channel}`]);
    const k = keysOf('t3');
    const a1 = await taken('t3', 'A', 'r1');
    expect(await releaseTaken('t3', 'B@r1|1')).toEqual({ ok: false, reason: 'taken' });
    // The owner's, but not this grant's: the whole string must match.
    expect(await releaseTaken('t3', `${a1}0`)).toEqual({ ok: false, reason: 'taken' });
    expect(await releaseTaken('t3', a1)).toEqual({ ok: true, remaining: 0 });
    expect(await redis.exists(k.lock)).toBe(0);
    expect(await releaseTaken('t3', a1)).toEqual({ ok: false, reason: 'deleted' });
    // A second hold: the hash, left to release-all.lua, which frees every hold.
    const a2 = await taken('t3', 'A', 'r2');
    await acquire('t3', 'A', 'r3');
    expect(await releaseTaken('t3', a2)).toBeUndefined();
    expect(await redis.hget(k.lock, 'A')).toBe('2');
    expect(await releaseAll(k, 'A')).toBe(0);
    expect(await redis.exists(k.lock)).toBe(0);
    // A waiter queued: the hash, left to release-all.lua, which hands the lock on.
    const a4 = await taken('t3', 'A', 'r4');
    expect((await acquire('t3', 'W', 'w1', 'join')).granted).toBe(false);
    expect(await releaseTaken('t3', a4)).toBeUndefined();
    expect(await redis.hget(k.lock, 'A')).toBe('1');
    expect(await releaseAll(k, 'A')).toBe(0);
    expect(await redis.hget(k.lock, 'W')).toBe('1');
    expect(await redis.hget(k.lock, '@c')).toBe('1');
    // release-all.lua frees a string lock of its owner too (a take resent through acquire.lua),
    // and only its owner's: 'A' is not the owner 'AB'.
    await redis.del(k.lock, k.queue, k.waiters);
    await taken('t3', 'AB', 'r5');
    expect(await releaseAll(k, 'A')).toEqual([-2]);
    expect(await releaseAll(k, 'AB')).toBe(0);
    expect(await redis.exists(k.lock)).toBe(0);
    const f = keysOf('t4');
    await redis.set(f.lock, 'x');
    expect(await releaseTaken('t4', 'A@r1|1')).toEqual({ ok: false, reason: 'taken' });
    expect(await redis.get(f.lock)).toBe('x');
  });

  it("release-all sent take's string frees it in one GET while it is that string, and otherwise decides in the same call: the hash hands on to a waiter; another grant's string, a foreign string, none as release answers them", async () => {
    const port = portOf(redis)!;
    const taken = async (name: string, owner: string, req: string) => {
      const reply = await take(name, owner, req);
      if (!reply?.granted || reply.releaseHint === undefined) throw new Error(`not granted: ${JSON.stringify(reply)}`);
      return reply.releaseHint;
    };
    const releaseAll = async (k: ReturnType<typeof keysOf>, owner: string, hint: string) =>
      replies.releaseReply(await runScript(port, scripts.releaseAll, all(k), [owner, `1000|${k.channel}`, hint]));
    const k = keysOf('t11');
    const a1 = await taken('t11', 'A', 'r1');
    expect(await releaseAll(k, 'A', a1)).toEqual({ ok: true, remaining: 0 });
    expect(await redis.exists(k.lock)).toBe(0);
    expect(await releaseAll(k, 'A', a1)).toEqual({ ok: false, reason: 'deleted' });
    // A waiter queued turned the string into the hash: the same call hands the lock on.
    const a2 = await taken('t11', 'A', 'r2');
    expect((await acquire('t11', 'W', 'w1', 'join')).granted).toBe(false);
    expect(await releaseAll(k, 'A', a2)).toEqual({ ok: true, remaining: 0 });
    expect(await redis.hget(k.lock, 'W')).toBe('1');
    expect(await redis.hget(k.lock, '@c')).toBe('1');
    // Another owner's string lock, sent an older grant's string: taken, nothing written.
    await redis.del(k.lock, k.queue, k.waiters);
    const b = await taken('t11', 'B', 'r3');
    expect(await releaseAll(k, 'A', a1)).toEqual({ ok: false, reason: 'taken' });
    expect(await redis.get(k.lock)).toBe(b);
    const f = keysOf('t10');
    await redis.set(f.lock, 'x');
    expect(await releaseAll(f, 'A', 'A@r1|1')).toEqual({ ok: false, reason: 'taken' });
    expect(await redis.get(f.lock)).toBe('x');
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
