import { lockKeys, multiAcquireScript, replies, runScript, scripts, portOf } from '@holdfast/core/workspace';
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';
import { sameSlotNames } from '@holdfast/test-utils';

/** multi-acquire.lua called directly: its contract, without the client around it. */
describe('multi-acquire script contract', () => {
  const fx = useRedis();
  let redis: Redis;
  beforeAll(async () => {
    redis = await fx.redis();
  });

  const keysOf = (name: string) => lockKeys(fx.prefix, name);
  const multi = async (names: string[], owner: string, req: string, mode = 'try', leaseMs = 5000) => {
    const ks = names.map(keysOf);
    const keys = [ks[0]!.fence, ...ks.flatMap((k) => [k.lock, k.queue, k.waiters])];
    const args = [owner, leaseMs, req, mode, 1000, 1000, ...ks.map((k) => k.channel)];
    return replies.multiAcquireReply(await runScript(portOf(redis)!, multiAcquireScript, keys, args), names.length);
  };
  const acquire = async (name: string, owner: string, req: string, mode = 'try') => {
    const k = keysOf(name);
    const keys = [k.lock, k.queue, k.waiters, k.fence];
    return replies.acquireReply(await runScript(portOf(redis)!, scripts.acquire, keys, [owner, 5000, req, mode, 1000, k.channel]), 5000);
  };
  const release = async (name: string, owner: string) => {
    const k = keysOf(name);
    const keys = [k.lock, k.queue, k.waiters, k.fence];
    return replies.releaseReply(await runScript(portOf(redis)!, scripts.release, keys, [owner, 'rel', k.channel, 1000, '1']));
  };
  const exists = async (names: string[]) => Promise.all(names.map((n) => redis.exists(keysOf(n).lock)));

  it('takes every free part with increasing tokens, as ordinary lock hashes', async () => {
    const names = sameSlotNames('s1', 3);
    const r = await multi(names, 'A', 'r1');
    expect(r.granted).toBe(true);
    if (!r.granted) return;
    expect(r.parts.map((p) => p.holdCount)).toEqual([1, 1, 1]);
    const tokens = r.parts.map((p) => p.token);
    expect(tokens[1]).toBeGreaterThan(tokens[0]!);
    expect(tokens[2]).toBeGreaterThan(tokens[1]!);
    for (const [i, name] of names.entries()) {
      expect(await redis.hgetall(keysOf(name).lock)).toEqual({ A: '1', '@r1': String(tokens[i]) });
      expect(await redis.pttl(keysOf(name).lock)).toBeGreaterThan(4000);
    }
    // A plain acquisition of a part is busy; the plain release frees it.
    expect(await acquire(names[1]!, 'B', 'b1')).toMatchObject({ granted: false });
    expect(await release(names[1]!, 'A')).toEqual({ ok: true, remaining: 0 });
  });

  it('takes nothing when one part is busy, and names that part', async () => {
    const names = sameSlotNames('s2', 3);
    await acquire(names[2]!, 'B', 'b1');
    const r = await multi(names, 'A', 'r1');
    expect(r).toMatchObject({ granted: false, busyPart: 2 });
    if (!r.granted && 'retryAfterMs' in r) expect(r.retryAfterMs).toBeGreaterThan(4000);
    expect(await exists(names)).toEqual([0, 0, 1]);
  });

  it('a resend of a granted request is recognised: same tokens, counted once', async () => {
    const names = sameSlotNames('s3', 2);
    const first = await multi(names, 'A', 'r1');
    const again = await multi(names, 'A', 'r1');
    expect(again).toEqual(first);
    expect(await redis.hget(keysOf(names[0]!).lock, 'A')).toBe('1');
  });

  it("'join' queues on the busy part only; the hand-off of that part is kept only when the rest is free", async () => {
    const names = sameSlotNames('s4', 2);
    await acquire(names[0]!, 'B', 'b1');
    const queued = await multi(names, 'A', 'r1', 'join');
    expect(queued).toMatchObject({ granted: false, busyPart: 0 });
    if (!queued.granted && 'serverMs' in queued) expect(queued.serverMs).toBeGreaterThan(0);
    expect(await redis.lrange(keysOf(names[0]!).queue, 0, -1)).toEqual(['r1']);
    expect(await redis.llen(keysOf(names[1]!).queue)).toBe(0);
    // Meanwhile C takes the other part; B's release hands part 0 to A's request.
    await acquire(names[1]!, 'C', 'c1');
    await release(names[0]!, 'B');
    expect(await redis.hget(keysOf(names[0]!).lock, 'A')).toBe('1');
    // Part 1 is busy: A gives part 0 back (nobody waits: it is free) and queues on part 1.
    const again = await multi(names, 'A', 'r1', 'join');
    expect(again).toMatchObject({ granted: false, busyPart: 1 });
    expect(await exists(names)).toEqual([0, 1]);
    expect(await redis.llen(keysOf(names[0]!).queue)).toBe(0);
    expect(await redis.lrange(keysOf(names[1]!).queue, 0, -1)).toEqual(['r1']);
    // C's release hands part 1 to A; the next attempt takes both and confirms the claim.
    await release(names[1]!, 'C');
    const granted = await multi(names, 'A', 'r1', 'join');
    expect(granted).toMatchObject({ granted: true });
    expect(await redis.hget(keysOf(names[1]!).lock, '@c')).toBeNull();
    expect(await redis.pttl(keysOf(names[1]!).lock)).toBeGreaterThan(4000);
    expect(await redis.exists(keysOf(names[1]!).queue, keysOf(names[1]!).waiters)).toBe(0);
  });

  it('a free part with waiters queued before goes to them first', async () => {
    const names = sameSlotNames('s5', 2);
    await acquire(names[1]!, 'B', 'b1');
    expect(await acquire(names[1]!, 'W', 'w1', 'join')).toMatchObject({ granted: false });
    await release(names[1]!, 'B');
    // Handed to W (claim), so busy for A.
    expect(await multi(names, 'A', 'r1')).toMatchObject({ granted: false, busyPart: 1 });
    expect(await redis.hget(keysOf(names[1]!).lock, 'W')).toBe('1');
    expect(await exists(names)).toEqual([0, 1]);
  });

  it('never touches data it did not write: a foreign key is reported, nothing taken', async () => {
    const names = sameSlotNames('s6', 2);
    await redis.set(keysOf(names[1]!).lock, 'not a lock');
    expect(await multi(names, 'A', 'r1')).toEqual({ granted: false, conflictPart: 1 });
    expect(await redis.get(keysOf(names[1]!).lock)).toBe('not a lock');
    expect(await exists(names)).toEqual([0, 1]);
  });
});
