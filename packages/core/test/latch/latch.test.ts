import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  ClientClosedError,
  InvalidArgumentError,
  KeyConflictError,
  LockTimeoutError,
  TELEMETRY_CHANNELS,
  type CountedDownEvent,
  type SyncMessage,
} from '@holdfast/core';
import { commandStats, commandStatsDelta, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay } from '../helpers.js';
import { useSyncServer } from './latch-fixture.js';

/** Script calls the server ran between two snapshots. */
async function scriptCalls(before: Record<string, number>, admin: ReturnType<ReturnType<typeof useSyncServer>['redis']>): Promise<number> {
  const delta = commandStatsDelta(before, await commandStats(admin));
  return (delta['evalsha'] ?? 0) + (delta['eval'] ?? 0);
}

describe('count-down latch', () => {
  const fx = useSyncServer();

  it('counts down from the count set, to 0 and no further, and is armed again after', async () => {
    const prefix = fx.prefix();
    const latch = fx.client({ prefix }).countDownLatch('import');
    expect(await latch.count()).toBe(0);
    expect(await latch.trySetCount(3)).toBe(true);
    expect(await latch.trySetCount(5)).toBe(false);
    expect(await latch.count()).toBe(3);
    expect(await latch.countDown()).toBe(2);
    expect(await latch.countDown()).toBe(1);
    expect(await latch.countDown()).toBe(0);
    expect(await latch.countDown()).toBe(0);
    expect(await latch.count()).toBe(0);
    expect(await latch.trySetCount(2)).toBe(true);
    expect(await latch.count()).toBe(2);
  });

  it('wakes every waiter, in every client, with one message and one read each, and runs nothing while they wait', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    // A short hand-off timeout: a waiter that polled would show here.
    const clients = Array.from({ length: 4 }, () => fx.client({ prefix, handoffTimeoutMs: 20 }));
    const latch = clients[0]!.countDownLatch('wake');
    expect(await latch.trySetCount(2)).toBe(true);
    const returned: number[] = [];
    const start = await commandStats(admin);
    const waits = clients.map((c, i) => c.countDownLatch('wake').wait().then(() => returned.push(i)));
    // Every waiter subscribed, then read the count once.
    await waitFor(async () => (await scriptCalls(start, admin)) >= 4);
    const before = await commandStats(admin);
    await delay(300);
    // Nothing but this test's own INFO reached the server.
    const { info, ...others } = commandStatsDelta(before, await commandStats(admin));
    expect(others).toEqual({});
    expect(info).toBe(1);
    expect(await latch.countDown()).toBe(1);
    await delay(100);
    expect(returned).toEqual([]);
    const beforeLast = await commandStats(admin);
    expect(await latch.countDown()).toBe(0);
    await Promise.all(waits);
    expect(returned.sort()).toEqual([0, 1, 2, 3]);
    // The count-down, then one read per waiter.
    expect(await scriptCalls(beforeLast, admin)).toBe(5);
  });

  it('returns at once at 0: never set, reached 0, or counted down before the wait subscribed', async () => {
    const prefix = fx.prefix();
    const locks = fx.client({ prefix });
    await locks.countDownLatch('never').wait({ waitMs: 1_000 });
    const latch = locks.countDownLatch('done');
    await latch.trySetCount(1);
    await fx.client({ prefix }).countDownLatch('done').countDown();
    await latch.wait({ waitMs: 1_000 });
    await latch.wait({ waitMs: 1_000 });
  });

  it('countDownAndWait: the last party counts down and every party returns', async () => {
    const prefix = fx.prefix();
    const clients = Array.from({ length: 3 }, () => fx.client({ prefix }));
    expect(await clients[0]!.countDownLatch('all').trySetCount(3)).toBe(true);
    const done: number[] = [];
    await Promise.all(clients.map((c, i) => c.countDownLatch('all').countDownAndWait({ waitMs: 10_000 }).then(() => done.push(i))));
    expect(done.sort()).toEqual([0, 1, 2]);
    expect(await clients[0]!.countDownLatch('all').count()).toBe(0);
  });

  it('a wait that runs out rejects with LockTimeoutError, an aborted one with the reason, a closed client with ClientClosedError', async () => {
    const prefix = fx.prefix();
    const locks = fx.client({ prefix });
    const latch = locks.countDownLatch('stuck');
    await latch.trySetCount(1);
    const timedOut = await latch.wait({ waitMs: 150 }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    expect((timedOut as LockTimeoutError).lockName).toBe('stuck');
    const controller = new AbortController();
    const aborted = latch.countDownAndWait({ signal: controller.signal }).catch((error: unknown) => error);
    const other = fx.client({ prefix }).countDownLatch('stuck');
    await other.trySetCount(2);
    // countDownAndWait at 0 returned; a latch set again waits.
    await aborted;
    const waiting = latch.wait({ signal: controller.signal }).catch((error: unknown) => error);
    await delay(50);
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await waiting).toBe(reason);
    const closing = latch.wait().catch((error: unknown) => error);
    await delay(50);
    await locks.close();
    expect(await closing).toBeInstanceOf(ClientClosedError);
    await expect(latch.count()).rejects.toBeInstanceOf(ClientClosedError);
    expect(() => locks.countDownLatch('x')).toThrow(ClientClosedError);
  });

  it('its keys expire ttlMs after the last change, and an expired latch reads 0', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    const latch = fx.client({ prefix }).countDownLatch('ttl', { ttlMs: 60_000 });
    expect(latch.ttlMs).toBe(60_000);
    await latch.trySetCount(3);
    await admin.pexpire(latch.keys.latch, 1_000);
    await latch.countDown();
    expect(await admin.pttl(latch.keys.latch)).toBeGreaterThan(59_000);
    expect(await admin.pttl(latch.keys.requests)).toBeGreaterThan(59_000);
    const short = fx.client({ prefix }).countDownLatch('short', { ttlMs: 100 });
    await short.trySetCount(2);
    await waitFor(async () => (await admin.exists(short.keys.latch)) === 0);
    expect(await short.count()).toBe(0);
    expect(await short.trySetCount(1)).toBe(true);
    expect(fx.client({ prefix }).countDownLatch('default').ttlMs).toBe(86_400_000);
  });

  it('an expiry lets the waiters through as the count-down to 0 does: each reads the count again when the TTL it read has run', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    const latch = fx.client({ prefix }).countDownLatch('expires', { ttlMs: 500 });
    expect(await latch.trySetCount(3)).toBe(true);
    const start = await commandStats(admin);
    const [a, b] = [fx.client({ prefix }), fx.client({ prefix })].map((c) => c.countDownLatch('expires', { ttlMs: 500 }));
    const waits = [a!.wait(), b!.countDownAndWait()];
    // A count-down meanwhile puts the expiry off: a waiter that read the earlier TTL reads the later one then.
    expect([1, 2]).toContain(await latch.countDown());
    await Promise.all(waits);
    expect(await latch.count()).toBe(0);
    // A few reads each (no polling): the first, one at each expiry read, and one more should a timer beat the server's clock.
    expect(await scriptCalls(start, admin)).toBeLessThan(20);
  });

  it('delete() removes it and lets its waiters through', async () => {
    const prefix = fx.prefix();
    const latch = fx.client({ prefix }).countDownLatch('gone');
    expect(await latch.delete()).toBe(false);
    await latch.trySetCount(2);
    const waiting = fx.client({ prefix }).countDownLatch('gone').wait({ waitMs: 10_000 });
    await delay(50);
    expect(await latch.delete()).toBe(true);
    await waiting;
    expect(await latch.count()).toBe(0);
  });

  it('refuses bad input with InvalidArgumentError, before any I/O', async () => {
    const locks = fx.client({ prefix: fx.prefix() });
    const latch = locks.countDownLatch('input');
    for (const count of [0, -1, 1.5, Number.NaN, '3', 1_000_000_001, undefined]) {
      await expect(latch.trySetCount(count as number)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(latch.trySetCount(0)).rejects.toThrow('Expected `count` to be a positive integer, got `0`');
    for (const waitMs of [0, -5, 1.5, 'x']) {
      await expect(latch.wait({ waitMs: waitMs as number })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(latch.wait({ signal: 'no' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => locks.countDownLatch('')).toThrow(InvalidArgumentError);
    expect(() => locks.countDownLatch('x', { ttlMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => locks.countDownLatch('x', 5 as never)).toThrow(InvalidArgumentError);
  });

  it('a key holding data holdfast did not write is reported and left as it is', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    const latch = fx.client({ prefix }).countDownLatch('foreign');
    await admin.set(latch.keys.latch, 'mine');
    await expect(latch.trySetCount(1)).rejects.toBeInstanceOf(KeyConflictError);
    await expect(latch.countDown()).rejects.toBeInstanceOf(KeyConflictError);
    await expect(latch.wait({ waitMs: 1_000 })).rejects.toBeInstanceOf(KeyConflictError);
    await admin.del(latch.keys.latch);
    await admin.hset(latch.keys.latch, 'other', '1');
    await expect(latch.count()).rejects.toBeInstanceOf(KeyConflictError);
    expect(await admin.hgetall(latch.keys.latch)).toEqual({ other: '1' });
  });

  it('a sorted set holdfast did not write at the records key is reported and left as it is, beside a latch or alone', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    const latch = fx.client({ prefix }).countDownLatch('planted');
    const plant = () => admin.zadd(latch.keys.requests, 1, 'a', 2, 'b');
    await plant();
    const calls = [() => latch.trySetCount(1), () => latch.countDown(), () => latch.count(), () => latch.delete(), () => latch.wait({ waitMs: 1_000 })];
    for (const call of calls) await expect(call()).rejects.toBeInstanceOf(KeyConflictError);
    await admin.del(latch.keys.requests);
    expect(await latch.trySetCount(2)).toBe(true);
    await admin.del(latch.keys.requests);
    await plant();
    for (const call of calls) await expect(call()).rejects.toBeInstanceOf(KeyConflictError);
    expect(await admin.zrange(latch.keys.requests, '0', '-1', 'WITHSCORES')).toEqual(['a', '1', 'b', '2']);
    expect(await admin.pttl(latch.keys.requests)).toBe(-1);
    expect(await admin.hget(latch.keys.latch, 'n')).toBe('2');
  });

  it('emits countedDown with kind latch, and traces each operation on holdfast:sync', async () => {
    const prefix = fx.prefix();
    const locks = fx.client({ prefix });
    const events: CountedDownEvent[] = [];
    locks.on('countedDown', (event) => events.push(event));
    const traced: SyncMessage[] = [];
    const onStart = (message: unknown) => traced.push(message as SyncMessage);
    const channel = `tracing:${TELEMETRY_CHANNELS.sync}:asyncEnd`;
    subscribe(channel, onStart);
    try {
      const latch = locks.countDownLatch('events');
      await latch.trySetCount(2);
      await latch.countDown();
      await latch.countDownAndWait();
      await latch.countDown(); // at 0: nothing applied, no event
    } finally {
      unsubscribe(channel, onStart);
    }
    expect(events).toEqual([
      { name: 'events', kind: 'latch', count: 1 },
      { name: 'events', kind: 'latch', count: 0 },
    ]);
    expect(traced.map((m) => [m.kind, m.operation, m.result])).toEqual([
      ['latch', 'trySetCount', true],
      ['latch', 'countDown', 1],
      ['latch', 'countDownAndWait', undefined],
      ['latch', 'countDown', 0],
    ]);
    expect(traced[0]!.clientId).toBe(locks.id);
  });
});
