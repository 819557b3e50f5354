import { tracingChannel } from 'node:diagnostics_channel';
import { LockClient, TELEMETRY_CHANNELS } from '@holdfast/core';
import { instrumentHoldfast, type HoldfastInstrumentation } from '@holdfast/otel';
import { SpanStatusCode } from '@opentelemetry/api';
import { sharedRedis } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inMemorySdk, sum, useContextManager, type InMemorySdk } from './otel-sdk.js';

// Every wait here is against a lock another client holds for the whole test,
// so it can only end by the caller's signal: no timing is asserted.
describe('@holdfast/otel outcome of an acquisition the caller aborted', () => {
  useContextManager();
  let redis: Redis;
  let sdk: InMemorySdk;
  let instrumentation: HoldfastInstrumentation | undefined;
  const clients: LockClient[] = [];
  const prefix = `otelab${Math.random().toString(36).slice(2, 8)}`;
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
    instrumentation = instrumentHoldfast({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider });
  });
  afterEach(async () => {
    instrumentation?.disable();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sdk.shutdown();
  });

  const acquireSpans = () => sdk.spans.getFinishedSpans().filter((s) => s.name === 'holdfast.acquire');

  it('an AbortSignal.timeout() or a plain abort() is aborted, not error, for every kind of lock', async () => {
    const a = client('a');
    const b = client('b');
    const held = [
      await a.lock('l').acquire(),
      await a.semaphore('s', { permits: 1 }).acquire(),
      await a.readWriteLock('rw').write.acquire(),
      await a.lock('m2').acquire(),
    ];
    // The timeout's reason is a DOMException named TimeoutError: outcome `error` before.
    const timedOut = (ms = 50) => ({ signal: AbortSignal.timeout(ms) });
    await expect(b.lock('l').acquire(timedOut())).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(b.semaphore('s', { permits: 1 }).acquire(timedOut())).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(b.readWriteLock('rw').read.acquire(timedOut())).rejects.toMatchObject({ name: 'TimeoutError' });
    await expect(b.multiLock(['m1', 'm2']).acquire(timedOut())).rejects.toMatchObject({ name: 'TimeoutError' });
    const controller = new AbortController();
    const waiting = b.lock('l').acquire({ signal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    for (const lease of held) await lease.release();

    const wait = (await sdk.collect())('holdfast.lock.wait.duration');
    expect(sum(wait, { 'holdfast.lock.outcome': 'error' })).toBe(0);
    expect(sum(wait, { 'holdfast.lock.kind': 'lock', 'holdfast.lock.outcome': 'aborted' })).toBeGreaterThanOrEqual(3);
    for (const kind of ['semaphore', 'read']) {
      expect(sum(wait, { 'holdfast.lock.kind': kind, 'holdfast.lock.outcome': 'aborted' })).toBe(1);
    }
    // The caller stopped waiting: no failure of the lock, so no error status on its span.
    const aborted = acquireSpans().filter((s) => s.attributes['holdfast.lock.outcome'] === 'aborted');
    expect(aborted.length).toBeGreaterThanOrEqual(5);
    expect(aborted.map((s) => s.status.code)).toEqual(aborted.map(() => SpanStatusCode.UNSET));
    expect(acquireSpans().filter((s) => s.attributes['holdfast.lock.outcome'] === 'error')).toEqual([]);
  });

  it('a waitMs timeout stays timeout, and a failure stays error with an error status', async () => {
    const a = client('a');
    const b = client('b');
    const lease = await a.lock('t').acquire();
    await expect(b.lock('t').acquire({ waitMs: 50 })).rejects.toMatchObject({ code: 'ERR_LOCK_TIMEOUT' });
    await lease.release();
    const lock = client('closed').lock('t');
    await clients.at(-1)!.close();
    await expect(lock.acquire()).rejects.toMatchObject({ name: 'ClientClosedError' });
    const wait = (await sdk.collect())('holdfast.lock.wait.duration');
    expect(sum(wait, { 'holdfast.lock.outcome': 'timeout' })).toBe(1);
    expect(sum(wait, { 'holdfast.lock.outcome': 'error' })).toBe(1);
    const failed = acquireSpans().find((s) => s.attributes['holdfast.lock.outcome'] === 'error')!;
    expect(failed.status.code).toBe(SpanStatusCode.ERROR);
  });

  it("an abort with the caller's own reason is aborted, for every kind of lock", async () => {
    const a = client('a');
    const b = client('b');
    const held = [
      await a.lock('own').acquire(),
      await a.semaphore('own-s', { permits: 1 }).acquire(),
      await a.readWriteLock('own-rw').write.acquire(),
      await a.lock('own-m2').acquire(),
    ];
    const controller = new AbortController();
    const waits = [
      b.lock('own').acquire({ signal: controller.signal }),
      b.semaphore('own-s', { permits: 1 }).acquire({ signal: controller.signal }),
      b.readWriteLock('own-rw').read.acquire({ signal: controller.signal }),
      b.multiLock(['own-m1', 'own-m2']).acquire({ signal: controller.signal }),
    ].map((p) => p.then(() => 'acquired', (e: unknown) => e));
    // Whether the abort meets a wait queued or one not sent yet, it rejects with the reason.
    await new Promise((resolve) => setImmediate(resolve));
    const reason = new Error('stop');
    controller.abort(reason);
    expect(await Promise.all(waits)).toEqual([reason, reason, reason, reason]);
    for (const lease of held) await lease.release();
    const wait = (await sdk.collect())('holdfast.lock.wait.duration');
    expect(sum(wait, { 'holdfast.lock.outcome': 'error' })).toBe(0);
    for (const kind of ['lock', 'semaphore', 'read']) {
      expect(sum(wait, { 'holdfast.lock.kind': kind, 'holdfast.lock.outcome': 'aborted' }), kind).toBeGreaterThanOrEqual(1);
    }
  });

  // The contract asked of core: an acquisition's context naming the caller's
  // signal. With it, any reason (an Error of the caller's, a holdfast error it
  // chained from a lease's signal) is told from a failure exactly.
  it('uses the caller signal when the acquire context carries it: any reason is aborted', async () => {
    const acquire = tracingChannel<unknown, object>(TELEMETRY_CHANNELS.acquire);
    const controller = new AbortController();
    const reason = Object.assign(new Error('stop'), { code: 'ERR_LOCK_TIMEOUT' });
    controller.abort(reason);
    const base = { name: 'synthetic', kind: 'lock', mode: 'wait', clientId: 'test' };
    const fail = (context: object, error: unknown) => acquire.tracePromise(() => Promise.reject(error), context).catch(() => undefined);
    await fail({ ...base, signal: controller.signal }, reason);
    // The signal aborted, but the call failed otherwise: still an error.
    await fail({ ...base, signal: controller.signal }, new Error('connection reset'));
    await fail({ ...base, signal: new AbortController().signal }, new Error('connection reset'));
    const wait = (await sdk.collect())('holdfast.lock.wait.duration');
    expect(sum(wait, { 'holdfast.lock.outcome': 'aborted' })).toBe(1);
    expect(sum(wait, { 'holdfast.lock.outcome': 'error' })).toBe(2);
    expect(sum(wait, { 'holdfast.lock.outcome': 'timeout' })).toBe(0);
  });
});
