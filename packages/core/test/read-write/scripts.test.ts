import { lockKeys, replies, runScript, rwScripts, portOf } from '@holdfast/core/workspace';
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/** Direct calls of the read-write lock's Lua scripts: their contracts, without the client around them. */
describe('read-write lock script contracts', () => {
  const fx = useRedis();
  let redis: Redis;
  let subscriber: Redis;
  const messages: string[] = [];
  let listening = '';
  beforeAll(async () => {
    redis = await fx.redis();
    subscriber = await fx.redis();
    subscriber.on('smessage', (channel: string, message: string) => {
      if (channel === listening) messages.push(message);
    });
  });

  const keysOf = (name: string) => lockKeys(fx.prefix, name, '', 'r');
  const all = (k: ReturnType<typeof keysOf>) => [k.lock, k.queue, k.waiters, k.fence, k.expiry!];
  const held = (k: ReturnType<typeof keysOf>) => [k.lock, k.expiry!];
  const acquire = async (name: string, kind: 'r' | 'w', owner: string, req: string, mode = 'try', leaseMs = 5000, via?: string) => {
    const k = keysOf(name);
    const args = [owner, leaseMs, req, mode, 1000, k.channel, kind, ...(via === undefined ? [] : [via])];
    return replies.acquireReply(await runScript(portOf(redis)!, rwScripts.acquire, all(k), args));
  };
  const release = async (name: string, owner: string, req: string, everyHold = false) => {
    const k = keysOf(name);
    return replies.releaseReply(
      await runScript(portOf(redis)!, rwScripts.release, all(k), [owner, req, k.channel, 1000, everyHold ? '1' : '0']),
    );
  };
  const holder = async (name: string, owner: string) => {
    const value = await redis.hget(keysOf(name).lock, owner);
    if (value === null) return null;
    const [kind, count, token, requestId, claim] = value.split('|');
    const expiresAt = Number(await redis.zscore(keysOf(name).expiry!, owner));
    return { kind, count: Number(count), expiresAt, token: Number(token), requestId, claim };
  };
  const listen = async (name: string) => {
    messages.length = 0;
    listening = keysOf(name).channel;
    await subscriber.ssubscribe(listening);
  };

  it('keeps every key of one read-write lock in one slot, apart from the mutex of that name', () => {
    const k = keysOf('{x}doc');
    const m = lockKeys(fx.prefix, '{x}doc');
    expect(k.lock).toMatch(/:rl:\{x\}doc$/);
    expect(new Set([k.lock, k.queue, k.waiters, k.fence, k.channel, k.expiry, m.lock]).size).toBe(7);
    expect(k.slot).toBe(m.slot);
  });

  it('grants readers side by side, each a field with its own lease, and the key lives as long as the longest', async () => {
    const a = await acquire('c1', 'r', 'A', 'a1', 'try', 2000);
    const b = await acquire('c1', 'r', 'B', 'b1', 'try', 8000);
    expect(a).toMatchObject({ granted: true, holdCount: 1 });
    expect(b).toMatchObject({ granted: true, holdCount: 1 });
    const fence = Number((await redis.get(keysOf('c1').fence)) ?? 0);
    if (a.granted && b.granted) expect([a.token, b.token]).toEqual([fence, fence]);
    expect(await holder('c1', 'A')).toMatchObject({ kind: 'r', count: 1, requestId: 'a1', claim: '0' });
    expect(await redis.pttl(keysOf('c1').lock)).toBeGreaterThan(6000);
    expect(await acquire('c1', 'w', 'W', 'w1')).toMatchObject({ granted: false });
    expect(await release('c1', 'A', 'a2')).toEqual({ ok: true, remaining: 0 });
    expect(await release('c1', 'B', 'b2')).toEqual({ ok: true, remaining: 0 });
    expect(await redis.exists(keysOf('c1').lock)).toBe(0);
  });

  it('a writer excludes everyone and takes a token above every earlier one', async () => {
    const w = await acquire('c2', 'w', 'W', 'w1');
    expect(w).toMatchObject({ granted: true, holdCount: 1 });
    expect(await acquire('c2', 'r', 'R', 'r1')).toMatchObject({ granted: false });
    expect(await acquire('c2', 'w', 'V', 'v1')).toMatchObject({ granted: false });
    const before = Number(await redis.get(keysOf('c2').fence));
    if (w.granted) expect(w.token).toBe(before);
    await release('c2', 'W', 'w2');
    const w2 = await acquire('c2', 'w', 'V', 'v2');
    if (w.granted && w2.granted) expect(w2.token).toBeGreaterThan(w.token);
    await release('c2', 'V', 'v3');
  });

  it('counts re-entries, never a resend twice, and reports a resent release the same', async () => {
    await acquire('c3', 'r', 'A', 'a1');
    expect(await acquire('c3', 'r', 'A', 'a2')).toMatchObject({ granted: true, holdCount: 2 });
    expect(await acquire('c3', 'r', 'A', 'a2')).toMatchObject({ granted: true, holdCount: 2 });
    expect(await release('c3', 'A', 'a3')).toEqual({ ok: true, remaining: 1 });
    expect(await release('c3', 'A', 'a3')).toEqual({ ok: true, remaining: 1 });
    expect(await release('c3', 'A', 'a4')).toEqual({ ok: true, remaining: 0 });
    expect(await release('c3', 'A', 'a4')).toEqual({ ok: false, reason: 'deleted' });
    expect(await acquire('c3', 'r', 'A', 'a5', 'reenter')).toEqual({ granted: false, lost: 'deleted' });
    await acquire('c3', 'r', 'B', 'b1');
    expect(await acquire('c3', 'r', 'A', 'a6', 'reenter')).toEqual({ granted: false, lost: 'taken' });
    expect(await release('c3', 'A', 'a7')).toEqual({ ok: false, reason: 'taken' });
    await release('c3', 'B', 'b2');
  });

  it('queues fairly: a reader behind a queued writer waits; the last reader out hands to the writer ("h")', async () => {
    await listen('c4');
    await acquire('c4', 'r', 'A', 'a1');
    expect(await acquire('c4', 'w', 'W', 'w1', 'join')).toMatchObject({ granted: false, serverMs: expect.any(Number) });
    expect(await acquire('c4', 'r', 'B', 'b1', 'try')).toMatchObject({ granted: false });
    expect(await acquire('c4', 'r', 'B', 'b1', 'join')).toMatchObject({ granted: false });
    expect(await redis.lrange(keysOf('c4').queue, 0, -1)).toEqual(['w1', 'b1']);
    await release('c4', 'A', 'a2');
    expect(await holder('c4', 'W')).toMatchObject({ kind: 'w', claim: '1', requestId: 'w1' });
    expect(await redis.lrange(keysOf('c4').queue, 0, -1)).toEqual(['b1']);
    // Confirmation: the same request, from the claim to the full lease.
    expect(await acquire('c4', 'w', 'W', 'w1', 'reenter')).toMatchObject({ granted: true, holdCount: 1 });
    expect(await holder('c4', 'W')).toMatchObject({ claim: '0' });
    await waitMessages(1);
    expect(messages[0]).toMatch(/^h\|w1\|1000\|\d+\|\d+$/);
    await release('c4', 'W', 'w2');
    expect(await holder('c4', 'B')).toMatchObject({ kind: 'r', claim: '1' });
    await release('c4', 'B', 'b2');
  });

  it('a writer release grants every reader at the head in one "g" message, up to the next writer', async () => {
    await listen('c5');
    await acquire('c5', 'w', 'W', 'w1');
    for (const [kind, owner] of [['r', 'R1'], ['r', 'R2'], ['r', 'R3'], ['w', 'V'], ['r', 'R4']] as const) {
      await acquire('c5', kind, owner, `${owner}-req`, 'join');
    }
    await release('c5', 'W', 'w2');
    for (const owner of ['R1', 'R2', 'R3']) expect(await holder('c5', owner)).toMatchObject({ kind: 'r', claim: '1' });
    expect(await holder('c5', 'R4')).toBeNull();
    expect(await redis.lrange(keysOf('c5').queue, 0, -1)).toEqual(['V-req', 'R4-req']);
    await waitMessages(1);
    const parts = messages[0]!.split('|');
    expect(parts[0]).toBe('g');
    expect(parts.slice(4)).toEqual(['R1-req', 'R2-req', 'R3-req']);
    expect(messages).toHaveLength(1);
    for (const owner of ['R1', 'R2', 'R3']) await release('c5', owner, `${owner}-rel`);
    expect(await holder('c5', 'V')).toMatchObject({ kind: 'w', claim: '1' });
    await release('c5', 'V', 'v-rel');
    await release('c5', 'R4', 'r4-rel');
  });

  it('downgrade: the writer reads at once (ahead of the queue); an upgrade of a reader waits like any writer', async () => {
    await acquire('c6', 'w', 'W', 'w1');
    await acquire('c6', 'w', 'V', 'v1', 'join');
    expect(await acquire('c6', 'r', 'D', 'd1', 'try', 5000, 'not-the-writer')).toMatchObject({ granted: false });
    expect(await acquire('c6', 'r', 'D', 'd1', 'try', 5000, 'W')).toMatchObject({ granted: true, holdCount: 1 });
    await release('c6', 'W', 'w2');
    expect(await holder('c6', 'D')).toMatchObject({ kind: 'r' });
    expect(await holder('c6', 'V')).toBeNull();
    await release('c6', 'D', 'd2');
    expect(await holder('c6', 'V')).toMatchObject({ kind: 'w', claim: '1' });
    await release('c6', 'V', 'v2');
  });

  it('cancel: a writer leaving the head of the queue lets the readers behind it in', async () => {
    const k = keysOf('c7');
    await acquire('c7', 'r', 'A', 'a1');
    await acquire('c7', 'w', 'W', 'w1', 'join');
    await acquire('c7', 'r', 'B', 'b1', 'join');
    expect(await runScript(portOf(redis)!, rwScripts.cancel, all(k), ['W', 'w1', k.channel, 1000])).toBe(0);
    expect(await holder('c7', 'B')).toMatchObject({ kind: 'r', claim: '1' });
    // Cancelling a granted request undoes its hold.
    expect(await runScript(portOf(redis)!, rwScripts.cancel, all(k), ['B', 'b1', k.channel, 1000])).toBe(1);
    expect(await holder('c7', 'B')).toBeNull();
    await release('c7', 'A', 'a2');
    expect(await redis.exists(k.lock, k.queue, k.waiters, k.expiry!)).toBe(0);
  });

  it('drops an expired holder on the next call, and grants past it', async () => {
    await acquire('c8', 'r', 'A', 'a1', 'try', 50);
    await acquire('c8', 'r', 'B', 'b1', 'try', 60_000);
    await waitUntilPast('c8', 'A');
    const w = await acquire('c8', 'w', 'W', 'w1');
    expect(w).toMatchObject({ granted: false });
    expect(await holder('c8', 'A')).toBeNull();
    await release('c8', 'B', 'b2');
    expect(await holder('c8', 'W')).toBeNull(); // 'try' never queued
    expect(await acquire('c8', 'w', 'W', 'w2')).toMatchObject({ granted: true });
    await release('c8', 'W', 'w3');
  });

  it('extend, renew and inspect act on one holder; force-release frees a side', async () => {
    const k = keysOf('c9');
    await acquire('c9', 'r', 'A', 'a1', 'try', 1000);
    await acquire('c9', 'r', 'B', 'b1', 'try', 1000);
    expect(replies.extendReply(await runScript(portOf(redis)!, rwScripts.extend, held(k), ['A', 30_000]))).toEqual({ ok: true });
    expect(replies.extendReply(await runScript(portOf(redis)!, rwScripts.extend, held(k), ['Z', 30_000]))).toEqual({ ok: false, reason: 'taken' });
    expect(await redis.pttl(k.lock)).toBeGreaterThan(20_000);
    const renewed = await runScript(portOf(redis)!, rwScripts.renew, [...held(k), ...held(k), ...held(keysOf('c9-none'))], [40_000, 'B Z A']);
    expect(replies.renewReply(renewed, 3)).toEqual([undefined, 'taken', 'deleted']);
    expect((await holder('c9', 'B'))!.expiresAt - (await holder('c9', 'A'))!.expiresAt).toBeGreaterThan(5000);
    const read = replies.inspectReply(await runScript(portOf(redis)!, rwScripts.inspect, held(k), ['r']));
    expect(read.pttl).toBeGreaterThan(30_000);
    expect(replies.inspectReply(await runScript(portOf(redis)!, rwScripts.inspect, held(k), ['w']))).toMatchObject({ pttl: -2 });
    const force = (side: string) => runScript(portOf(redis)!, rwScripts.forceRelease, all(k), [k.channel, 1000, side]);
    expect(replies.forceReleaseReply(await force('w'))).toEqual({ removed: false, foreign: false });
    expect(replies.forceReleaseReply(await force('r'))).toEqual({ removed: true, foreign: false });
    expect(await redis.exists(k.lock)).toBe(0);
  });

  it('never touches data it did not write', async () => {
    const k = keysOf('c10');
    await redis.set(k.lock, 'someone else');
    expect(await acquire('c10', 'r', 'A', 'a1')).toEqual({ granted: false, conflict: true });
    expect(await release('c10', 'A', 'a2')).toEqual({ ok: false, reason: 'taken' });
    expect(replies.inspectReply(await runScript(portOf(redis)!, rwScripts.inspect, held(k), ['r']))).toMatchObject({ foreign: true });
    expect(replies.forceReleaseReply(await runScript(portOf(redis)!, rwScripts.forceRelease, all(k), [k.channel, 1000, '*']))).toEqual({
      removed: false,
      foreign: true,
    });
    expect(replies.renewReply(await runScript(portOf(redis)!, rwScripts.renew, held(k), [1000, 'A']), 1)).toEqual(['taken']);
    expect(replies.extendReply(await runScript(portOf(redis)!, rwScripts.extend, held(k), ['A', 1000]))).toEqual({ ok: false, reason: 'taken' });
    expect(await redis.get(k.lock)).toBe('someone else');
    await redis.del(k.lock);
    await redis.hset(k.lock, 'field', 'not ours');
    expect(await acquire('c10', 'w', 'A', 'a3')).toEqual({ granted: false, conflict: true });
    expect(await redis.hgetall(k.lock)).toEqual({ field: 'not ours' });
    await redis.del(k.lock);
  });

  it('refuses a queue or waiter table of another type before any write, and leaves it as it is', async () => {
    const cancel = async (name: string, owner: string, req: string) => {
      const k = keysOf(name);
      return runScript(portOf(redis)!, rwScripts.cancel, all(k), [owner, req, k.channel, 1000]);
    };
    const force = async (name: string) => {
      const k = keysOf(name);
      return replies.forceReleaseReply(await runScript(portOf(redis)!, rwScripts.forceRelease, all(k), [k.channel, 1000, '*']));
    };
    const plants = [
      // The queue another type; the waiter table another type while a writer is queued.
      ['queue', 'queue', async (_: string, k: ReturnType<typeof keysOf>) => void (await redis.set(k.queue, 'not ours'))],
      ['waiters', 'waiters', async (name: string, k: ReturnType<typeof keysOf>) => {
        expect(await acquire(name, 'w', 'W', 'w1', 'join')).toMatchObject({ granted: false });
        await redis.del(k.waiters);
        await redis.set(k.waiters, 'not ours');
      }],
    ] as const;
    for (const [where, key, plant] of plants) {
      const name = `foreign-${where}`;
      const k = keysOf(name);
      // A live reader, and one whose lease ended: every writing call would drop it first.
      await acquire(name, 'r', 'A', 'a1', 'try', 60_000);
      await acquire(name, 'r', 'B', 'b1', 'try', 60_000);
      await redis.zadd(k.expiry!, 1, 'B');
      await plant(name, k);
      const state = async () => Promise.all(all(k).map((x) => redis.dump(x)));
      const before = await state();
      expect(await acquire(name, 'r', 'D', 'd1'), where).toEqual({ granted: false, conflict: true });
      expect(await acquire(name, 'w', 'D', 'd1'), where).toEqual({ granted: false, conflict: true });
      expect(await acquire(name, 'w', 'D', 'd1', 'join'), where).toEqual({ granted: false, conflict: true });
      expect(await acquire(name, 'r', 'A', 'a2'), where).toEqual({ granted: false, conflict: true });
      expect(await release(name, 'A', 'a3'), where).toEqual({ ok: false, reason: 'taken' });
      expect(await cancel(name, 'D', 'd1'), where).toBe(0);
      expect(await force(name), where).toEqual({ removed: false, foreign: true });
      // Read-only: it answers from the holders, the queue unread.
      expect(replies.inspectReply(await runScript(portOf(redis)!, rwScripts.inspect, held(k), ['r'])), where).toMatchObject({ foreign: false });
      expect(await state(), where).toEqual(before);
      expect(await redis.pttl(k[key]), where).toBe(-1);
    }
    // Joining and cancelling use the waiter table even when nobody waits.
    const k = keysOf('foreign-table');
    await redis.set(k.waiters, 'not ours');
    expect(await acquire('foreign-table', 'w', 'D', 'd1', 'join')).toEqual({ granted: false, conflict: true });
    expect(await cancel('foreign-table', 'D', 'd1')).toBe(0);
    expect(await redis.get(k.waiters)).toBe('not ours');
    expect(await redis.exists(k.lock, k.expiry!, k.queue)).toBe(0);
  });

  it('reads a lock of the previous layout (each lease end in its entry, no sorted set) and converts it once', async () => {
    const k = keysOf('c11');
    const [seconds] = await redis.time();
    const later = Number(seconds) * 1000 + 30_000;
    await redis.hset(k.lock, 'A', `r|1|${later}|7|a1|0`, 'B', `r|2|${later + 5000}|7|b1|0`, 'X', `r|1|1|3|x1|0`);
    await redis.pexpire(k.lock, 35_000);
    expect(replies.inspectReply(await runScript(portOf(redis)!, rwScripts.inspect, held(k), ['r']))).toMatchObject({ pttl: expect.any(Number), token: 7 });
    // A writer waits for both live readers; the expired one is gone with the conversion.
    expect(await acquire('c11', 'w', 'W', 'w1')).toMatchObject({ granted: false });
    expect(await redis.zscore(k.expiry!, 'A')).toBe(String(later));
    expect(await redis.hexists(k.lock, 'X')).toBe(0);
    expect(await redis.pttl(k.expiry!)).toBeGreaterThan(30_000);
    // Re-entry and release of a converted holder count its holds as they were.
    expect(await acquire('c11', 'r', 'B', 'b2')).toMatchObject({ granted: true, holdCount: 3 });
    expect(await release('c11', 'A', 'a2')).toEqual({ ok: true, remaining: 0 });
    expect(await release('c11', 'B', 'b3', true)).toEqual({ ok: true, remaining: 0 });
    expect(await redis.exists(k.lock, k.expiry!)).toBe(0);
    // A writer of the previous layout keeps readers out once converted.
    await redis.hset(k.lock, 'V', `w|1|${later}|9|v1|0`);
    await redis.pexpire(k.lock, 35_000);
    expect(await acquire('c11', 'r', 'R', 'r1')).toMatchObject({ granted: false });
    expect(await redis.hget(k.lock, '!')).toBe('V');
    await redis.del(k.lock, k.expiry!);
  });

  async function waitMessages(count: number) {
    for (let i = 0; i < 500 && messages.length < count; i++) await new Promise((r) => setTimeout(r, 10));
  }

  async function waitUntilPast(name: string, owner: string) {
    const h = await holder(name, owner);
    for (;;) {
      const [seconds, micros] = await redis.time();
      if (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > h!.expiresAt) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
});
