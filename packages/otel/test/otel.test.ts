import { LockClient } from '@holdfast/core';
import { lockKeys } from '@holdfast/core/internal';
import { Watchdog } from '@holdfast/watchdog';
import { instrumentHoldfast, type HoldfastInstrumentation } from '@holdfast/otel';
import type { Histogram } from '@opentelemetry/sdk-metrics';
import { sharedRedis, waitFor, differentSlotNames, sameSlotNames } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inMemorySdk, sum, useContextManager, type InMemorySdk } from './otel-sdk.js';

describe('@holdfast/otel with the OpenTelemetry SDK in-memory exporters', () => {
  useContextManager();
  let redis: Redis;
  let sdk: InMemorySdk;
  let instrumentation: HoldfastInstrumentation | undefined;
  const clients: LockClient[] = [];
  const prefix = `otel${Math.random().toString(36).slice(2, 8)}`;
  const client = (name: string) => {
    const c = new LockClient(redis, { prefix, name });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    redis = (await sharedRedis()).client();
  });
  afterAll(() => {
    redis.disconnect();
  });
  beforeEach(() => {
    sdk = inMemorySdk();
  });
  afterEach(async () => {
    instrumentation?.disable();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sdk.shutdown();
  });

  const setup = (lockNameAttribute = false) => {
    instrumentation = instrumentHoldfast({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider, lockNameAttribute });
  };
  const collect = () => sdk.collect();

  it('records waits, holds, acquisitions, the held gauge and hand-offs under contention', async () => {
    setup();
    const a = client('a');
    const b = client('b');
    const first = await a.lock('hot').acquire();
    const waiting = b.lock('hot').acquire({ waitMs: 20_000 });
    await waitFor(async () => (await redis.llen(a.lock('hot').keys.queue)) === 1);
    expect(await b.lock('hot').tryAcquire()).toBeNull();
    await expect(b.lock('hot').acquire({ waitMs: 30 })).rejects.toThrow('hot');
    let points = await collect();
    expect(sum(points('holdfast.lock.held'), { 'holdfast.lock.kind': 'lock' })).toBe(1);
    await first.release();
    const second = await waiting;
    const permit = await a.semaphore('pool', { permits: 2 }).acquire();
    await a.lock('hot2').withLock(() => a.lock('hot2').withLock(() => undefined));
    await second.release();
    await permit.release();

    points = await collect();
    const wait = points('holdfast.lock.wait.duration');
    expect(sum(wait, { 'holdfast.lock.outcome': 'acquired' })).toBe(5);
    expect(sum(wait, { 'holdfast.lock.outcome': 'busy' })).toBe(1);
    expect(sum(wait, { 'holdfast.lock.outcome': 'timeout' })).toBe(1);
    expect(wait.every((p) => p.attributes['holdfast.lock.name'] === undefined)).toBe(true);
    expect(sum(points('holdfast.lock.acquired'), { 'holdfast.lock.kind': 'lock' })).toBe(4);
    expect(sum(points('holdfast.lock.acquired'), { 'holdfast.lock.kind': 'semaphore' })).toBe(1);
    // Every hold ended: back to 0; a re-entry never counted twice.
    expect(sum(points('holdfast.lock.held'))).toBe(0);
    const hold = points('holdfast.lock.hold.duration');
    expect(sum(hold, { 'holdfast.lock.outcome': 'released' })).toBe(4);
    // The waiter waited at least until the release that handed it the lock.
    const waited = wait.filter((p) => p.attributes['holdfast.lock.outcome'] === 'acquired').map((p) => (p.value as Histogram).max!);
    expect(Math.max(...waited)).toBeGreaterThan(0);
  });

  it('counts lost leases by reason, and the lock name only when asked', async () => {
    setup(true);
    const a = client('a');
    const lease = await a.lock('doomed').acquire();
    await a.lock('doomed').forceRelease();
    expect(lease.signal.aborted).toBe(true);
    const points = await collect();
    expect(points('holdfast.lock.lost').map((p) => [p.attributes, p.value])).toEqual([
      [{ 'holdfast.lock.kind': 'lock', 'holdfast.lock.name': 'doomed', 'holdfast.lock.reason': 'deleted' }, 1],
    ]);
    expect(sum(points('holdfast.lock.held'))).toBe(0);
    expect(sum(points('holdfast.lock.hold.duration'), { 'holdfast.lock.outcome': 'lost' })).toBe(1);
  });

  it('never counts out a hold it did not count in: holds taken before it started', async () => {
    const a = client('a');
    // Granted while nothing listened: no grant time, no acquisition context.
    const before = await a.lock('early').acquire();
    const doomed = await a.lock('early-lost').acquire();
    setup();
    const after = await a.lock('late').acquire();
    let points = await collect();
    expect(sum(points('holdfast.lock.held'))).toBe(1);
    await before.release();
    await a.lock('early-lost').forceRelease();
    expect(doomed.signal.aborted).toBe(true);
    points = await collect();
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([1]);
    expect(sum(points('holdfast.lock.lost'), { 'holdfast.lock.reason': 'deleted' })).toBe(1);
    // The early holds' times are unknown (not recorded while nobody listened) and left out.
    expect(sum(points('holdfast.lock.hold.duration'))).toBe(0);
    await after.release();
    points = await collect();
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([0]);
    expect(sum(points('holdfast.lock.hold.duration'), { 'holdfast.lock.outcome': 'released' })).toBe(1);
  });

  it('counts every part of a multi-lock as an acquisition, a same-slot group taken by one call included', async () => {
    setup();
    const a = client('a');
    const b = client('b');
    // Two names of one hash slot (taken by one script call) and a part of its own.
    const group = sameSlotNames('otel-group', 2);
    const solo = differentSlotNames('otel-solo', 2).find((name) => lockKeys(prefix, name).slot !== lockKeys(prefix, group[0]!).slot)!;
    const multi = a.multiLock([...group, solo]);
    const lease = await multi.acquire();
    let points = await collect();
    const acquired = points('holdfast.lock.acquired');
    expect(sum(acquired, { 'holdfast.lock.kind': 'lock' })).toBe(3);
    expect(points('holdfast.lock.held').map((p) => [p.attributes, p.value])).toEqual([[{ 'holdfast.lock.kind': 'lock' }, 3]]);
    expect(sum(points('holdfast.lock.wait.duration'), { 'holdfast.lock.outcome': 'acquired' })).toBe(3);
    // A group found busy: each of its parts is a busy acquisition, nothing held.
    expect(await b.multiLock(group).tryAcquire()).toBeNull();
    points = await collect();
    expect(sum(points('holdfast.lock.wait.duration'), { 'holdfast.lock.outcome': 'busy' })).toBe(2);
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([3]);
    await lease.release();

    points = await collect();
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([0]);
    expect(sum(points('holdfast.lock.hold.duration'), { 'holdfast.lock.outcome': 'released' })).toBe(3);
    const acquires = sdk.spans.getFinishedSpans().filter((s) => s.name === 'holdfast.acquire');
    expect(acquires.filter((s) => s.attributes['holdfast.lock.outcome'] === 'acquired').map((s) => s.attributes['holdfast.lock.token'])).toEqual(
      expect.arrayContaining([...lease.tokens.values()]),
    );
    expect(sdk.spans.getFinishedSpans().filter((s) => s.name === 'holdfast.release')).toHaveLength(3);
  });

  it('spans: acquire (with its wait) and release parented to the caller, renewal ticks on their own', async () => {
    setup();
    const a = client('a');
    const dog = new Watchdog(a, { timeoutMs: 900 });
    const caller = sdk.tracerProvider.getTracer('app');
    await caller.startActiveSpan('checkout', async (parent) => {
      await a.lock('traced').withLock(async () => {
        await waitFor(async () => sdk.spans.getFinishedSpans().some((s) => s.name === 'holdfast.watchdog.renewal'), { timeoutMs: 10_000 });
      });
      parent.end();
    });
    await dog.stop();
    const finished = sdk.spans.getFinishedSpans();
    const checkout = finished.find((s) => s.name === 'checkout')!;
    const acquire = finished.find((s) => s.name === 'holdfast.acquire')!;
    const release = finished.find((s) => s.name === 'holdfast.release')!;
    expect(acquire.parentSpanContext?.spanId).toBe(checkout.spanContext().spanId);
    expect(release.parentSpanContext?.spanId).toBe(checkout.spanContext().spanId);
    expect(acquire.attributes).toMatchObject({ 'holdfast.lock.kind': 'lock', 'holdfast.lock.mode': 'wait', 'holdfast.lock.outcome': 'acquired' });
    expect(acquire.attributes['holdfast.lock.token']).toEqual(expect.any(Number));
    const renewal = finished.find((s) => s.name === 'holdfast.watchdog.renewal')!;
    expect(renewal.attributes).toMatchObject({ 'holdfast.renewal.holds': 1, 'holdfast.lock.outcome': 'ok' });
    const points = await collect();
    expect(sum(points('holdfast.watchdog.renewal.duration'), { 'holdfast.lock.outcome': 'ok' })).toBeGreaterThanOrEqual(1);
  });

  it('latch and barrier calls: a duration and a span each, named after the method, with the outcome', async () => {
    setup();
    const a = client('a');
    const latch = a.countDownLatch('otel-latch');
    expect(await latch.trySetCount(1)).toBe(true);
    await expect(latch.wait({ waitMs: 30 })).rejects.toMatchObject({ code: 'ERR_LOCK_TIMEOUT' });
    const stop = new AbortController();
    const aborted = latch.wait({ signal: stop.signal });
    stop.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    expect(await latch.countDown()).toBe(0);
    await latch.wait();
    // Three parties, two arrive: the one whose wait runs out breaks the generation for the other.
    const barrier = a.barrier('otel-barrier', { parties: 3 });
    // Its rejection is taken at once: it may come before the other party's (a loaded machine).
    const first = barrier.arrive({ waitMs: 20_000 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await expect(barrier.arrive({ waitMs: 50 })).rejects.toMatchObject({ code: 'ERR_LOCK_TIMEOUT' });
    expect(await first).toMatchObject({ code: 'ERR_BARRIER_BROKEN' });

    const durations = (await collect())('holdfast.sync.duration');
    const count = (kind: string, operation: string, outcome: string) =>
      sum(durations, { 'holdfast.lock.kind': kind, 'holdfast.sync.operation': operation, 'holdfast.lock.outcome': outcome });
    expect(count('latch', 'trySetCount', 'ok')).toBe(1);
    expect(count('latch', 'wait', 'timeout')).toBe(1);
    expect(count('latch', 'wait', 'aborted')).toBe(1);
    expect(count('latch', 'countDown', 'ok')).toBe(1);
    expect(count('latch', 'wait', 'ok')).toBe(1);
    expect(count('barrier', 'arrive', 'timeout')).toBe(1);
    expect(count('barrier', 'arrive', 'broken')).toBe(1);
    expect(sum(durations)).toBe(7);

    const spans = sdk.spans.getFinishedSpans();
    expect(spans.map((s) => s.name).sort()).toEqual([
      'holdfast.barrier.arrive',
      'holdfast.barrier.arrive',
      'holdfast.latch.countDown',
      'holdfast.latch.trySetCount',
      'holdfast.latch.wait',
      'holdfast.latch.wait',
      'holdfast.latch.wait',
    ]);
    // A failure sets the error status; the caller's own abort does not.
    const status = (outcome: string) => spans.filter((s) => s.attributes['holdfast.lock.outcome'] === outcome).map((s) => s.status.code);
    expect(status('timeout')).toEqual([2, 2]);
    expect(status('broken')).toEqual([2]);
    expect(status('aborted')).toEqual([0]);
    expect(status('ok')).toEqual([0, 0, 0]);
  });

  it('disable() takes the holds it counted out of the held gauge; enable() counts afresh, never twice', async () => {
    setup();
    const a = client('a');
    const one = await a.lock('d1').acquire();
    const two = await a.lock('d2').acquire();
    const permit = await a.semaphore('dpool', { permits: 2 }).acquire();
    const held = async () => (await collect())('holdfast.lock.held').map((p) => [p.attributes['holdfast.lock.kind'], p.value]);
    expect(await held()).toEqual(expect.arrayContaining([['lock', 2], ['semaphore', 1]]));
    instrumentation!.disable();
    instrumentation!.disable();
    // Their releases will not be seen: nothing of them may stay in the gauge.
    expect(await held()).toEqual(expect.arrayContaining([['lock', 0], ['semaphore', 0]]));
    await one.release();
    instrumentation!.enable();
    instrumentation!.enable();
    const three = await a.lock('d3').acquire();
    // Counted out at disable() already: its release must not count it out again.
    await two.release();
    await permit.release();
    expect(await held()).toEqual(expect.arrayContaining([['lock', 1], ['semaphore', 0]]));
    await three.release();
    expect(await held()).toEqual(expect.arrayContaining([['lock', 0], ['semaphore', 0]]));
    // Recording again: the re-subscribed channels see acquisitions.
    expect(sum((await collect())('holdfast.lock.acquired'))).toBe(4);
  });

  it('disable() stops recording', async () => {
    setup();
    instrumentation!.disable();
    const a = client('a');
    await (await a.lock('quiet').acquire()).release();
    const points = await collect();
    expect(points('holdfast.lock.acquired')).toEqual([]);
    expect(sdk.spans.getFinishedSpans()).toEqual([]);
  });
});
