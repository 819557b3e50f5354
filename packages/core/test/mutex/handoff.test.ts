import type { LockClient } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { commandStats, commandStatsDelta, waitFor } from '@holdfast/test-utils';
import { delay, queued, useRedis } from '../helpers.js';

describe('waiting and hand-off', () => {
  const fx = useRedis();

  it('a waiter gets a released lock at once, not after the holder lease', async () => {
    const holder = await fx.client();
    const waiter = await fx.client();
    const lease = await holder.lock('handoff').acquire({ leaseMs: 20_000 });
    const waiting = waiter.lock('handoff').acquire({ waitMs: 15_000 });
    await queued(await fx.redis(), waiter.lock('handoff').keys.queue);
    const releasedAt = performance.now();
    await lease.release();
    const next = await waiting;
    const gap = performance.now() - releasedAt;
    expect(next.token).toBeGreaterThan(lease.token);
    // Woken by pub/sub: far below the 20 s the lease still had to run (half of it is a bound no
    // scheduling delay reaches).
    expect(gap).toBeLessThan(10_000);
    await next.release();
  });

  it('a lease started on the hand-off message is confirmed to its full length', async () => {
    const holder = await fx.client({ handoffTimeoutMs: 300 });
    const waiter = await fx.client({ handoffTimeoutMs: 300 });
    const redis = await fx.redis();
    const lost: unknown[] = [];
    waiter.on('lost', (e) => lost.push(e));
    const first = await holder.lock('confirm').acquire();
    const waiting = waiter.lock('confirm').acquire({ leaseMs: 10_000, waitMs: 10_000 });
    await queued(redis, waiter.lock('confirm').keys.queue);
    await first.release();
    const lease = await waiting;
    // Well past the 300 ms claim: the background confirmation gave it the full lease.
    await delay(600);
    expect(lost).toEqual([]);
    expect(lease.isHeld).toBe(true);
    expect(await redis.pttl(waiter.lock('confirm').keys.lock)).toBeGreaterThan(8_000);
    expect(await redis.hexists(waiter.lock('confirm').keys.lock, '@c')).toBe(0);
    await lease.release();
  });

  it('a re-entry made right after a hand-off waits for the confirmation and counts once', async () => {
    const holder = await fx.client();
    const waiter = await fx.client();
    const redis = await fx.redis();
    const lock = waiter.lock('reenter-after-handoff');
    const first = await holder.lock('reenter-after-handoff').acquire();
    const inside = lock.withLock(async (outer) => {
      // Synchronously after the hand-off: the confirmation has not been sent yet.
      const inner = await lock.acquire();
      const counts = await redis.hgetall(lock.keys.lock);
      await inner.release();
      return { outer: outer.token, inner: inner.holdCount, counts };
    });
    await queued(redis, lock.keys.queue);
    await first.release();
    const seen = await inside;
    expect(seen.inner).toBe(2);
    const ownerCounts = Object.entries(seen.counts).filter(([field]) => !field.startsWith('@'));
    // One owner with exactly two holds, and the claim confirmed before the re-entry.
    expect(ownerCounts.map(([, count]) => count)).toEqual(['2']);
    expect(seen.counts['@c']).toBeUndefined();
    expect(await redis.exists(lock.keys.lock)).toBe(0);
  });

  it('a waiter whose queue entry vanished is not starved by hand-offs to others', async () => {
    const options = { handoffTimeoutMs: 300 };
    const clients = await Promise.all([0, 1, 2, 3].map(() => fx.client(options)));
    const [a, b, d, c] = clients as [LockClient, LockClient, LockClient, LockClient];
    const redis = await fx.redis();
    const keys = a.lock('vanish').keys;
    const entriesOf = async (client: LockClient) =>
      Object.entries(await redis.hgetall(keys.waiters)).filter(([, entry]) => entry.includes(`|${client.id}`));
    const first = await a.lock('vanish').acquire();
    const waiting = c.lock('vanish').acquire({ waitMs: 10_000 });
    await waitFor(async () => (await entriesOf(c)).length > 0);
    // A steady stream of hand-offs between a, b and d follows; one of them is
    // always queued, so no release finds the queue empty, and each hand-off is
    // announced to c too.
    let stop = false;
    const cycle = async (client: LockClient) => {
      while (!stop) {
        await client.lock('vanish').withLock(() => delay(2), { waitMs: 10_000 }).catch(() => undefined);
      }
    };
    const busy = [cycle(b), cycle(d)];
    await waitFor(async () => (await entriesOf(b)).length > 0 && (await entriesOf(d)).length > 0);
    // Remove c's queue entry behind its back (an expiry or a lost write would do the same).
    for (const [id] of await entriesOf(c)) await redis.multi().lrem(keys.queue, 0, id).hdel(keys.waiters, id).exec();
    busy.push(first.release().then(() => cycle(a)));
    const lease = await waiting.finally(() => {
      stop = true;
    });
    expect(lease.isHeld).toBe(true);
    await lease.release();
    await Promise.all(busy);
  });

  it('serves waiters first-come first-served, newcomers queue behind them', async () => {
    const holder = await fx.client();
    const clients = await Promise.all([fx.client(), fx.client(), fx.client()]);
    const first = await holder.lock('fifo').acquire();
    const order: number[] = [];
    const redis = await fx.redis();
    const queued = () => redis.llen(holder.lock('fifo').keys.queue);
    // Each waiter joins once the one before it is in the queue: the arrival order is the
    // order of the calls, however late the machine runs them.
    const waits: Promise<void>[] = [];
    for (const [i, c] of clients.entries()) {
      waits.push(
        c
          .lock('fifo')
          .acquire({ waitMs: 10_000 })
          .then(async (lease) => {
            order.push(i);
            await delay(5);
            await lease.release();
          }),
      );
      await waitFor(async () => (await queued()) === i + 1, { timeoutMs: 20_000 });
    }
    await first.release();
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2]);
  });

  it('a crashed holder is replaced when its lease expires, not before', async () => {
    const crashed = await fx.client();
    const waiter = await fx.client();
    // The lease is set on the server after this point, so it cannot end before 400 ms from here
    // (however long close() below takes).
    const acquiredAt = performance.now();
    await crashed.lock('crash').acquire({ leaseMs: 400 });
    await crashed.close(); // no release: the process "died"
    const started = performance.now();
    const lease = await waiter.lock('crash').acquire({ waitMs: 5_000 });
    expect(performance.now() - acquiredAt).toBeGreaterThanOrEqual(395);
    expect(performance.now() - started).toBeLessThan(3_000);
    await lease.release();
  });

  it('a stale release after expiry does not free the new holder', async () => {
    const a = await fx.client();
    const b = await fx.client();
    a.on('lost', () => undefined);
    const stale = await a.lock('stale').acquire({ leaseMs: 100 });
    await delay(200);
    const fresh = await b.lock('stale').acquire({ waitMs: 2_000 });
    await expect(stale.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
    expect(await b.lock('stale').isLocked()).toBe(true);
    expect(fresh.isHeld).toBe(true);
    await fresh.release();
  });

  it('contended sections cost three client calls each once subscribed, plus one per waiter a free release woke early', async () => {
    const redis = await fx.redis();
    // Neither a hand-off claim nor a subscription may run out on a machine too busy to keep
    // up: either would add a call that has nothing to do with the protocol's count.
    const options = { handoffTimeoutMs: 60_000, subscriptionLingerMs: 600_000 };
    const workers = await Promise.all([fx.client(options), fx.client(options), fx.client(options)]);
    const run = async (sections: number) => {
      let overlap = 0;
      let inside = 0;
      await Promise.all(
        workers.map(async (w) => {
          for (let i = 0; i < sections; i++) {
            await w.lock('contended').withLock(async () => {
              if (++inside > 1) overlap++;
              await delay(2);
              inside--;
            });
            await delay(2);
          }
        }),
      );
      return overlap;
    };
    expect(await run(3)).toBe(0); // warm-up: subscriptions are made once
    // The lock's messages, as the workers get them: 'h|…' hands the lock to a queued waiter,
    // 'f' says it is free with nobody queued (only some releases send it).
    const listener = redis.duplicate();
    const messages: string[] = [];
    listener.on('smessage', (_channel: string, message: string) => messages.push(message.slice(0, 1)));
    await listener.ssubscribe(workers[0]!.lock('contended').keys.channel);
    const before = await commandStats(redis);
    const overlaps = await run(20);
    const delta = commandStatsDelta(before, await commandStats(redis));
    // Every message of the run was published before this PING ran, so its reply comes after them.
    await listener.ping();
    listener.disconnect();
    const calls = (delta['evalsha'] ?? 0) + (delta['eval'] ?? 0) + (delta['subscribe'] ?? 0) + (delta['ssubscribe'] ?? 0);
    expect(overlaps).toBe(0);
    expect(messages.filter((m) => m !== 'h' && m !== 'f')).toEqual([]);
    // A release that finds nobody queued ('f') wakes every local waiter; the other two
    // workers' queued attempts may have been in flight then (a busy machine makes it likely),
    // and each such waiter asks once more: at most two calls more per free release.
    const frees = messages.filter((m) => m === 'f').length;
    expect(calls).toBeLessThanOrEqual(60 * 3 + 2 * frees);
  });
});
