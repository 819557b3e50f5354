import { channel } from 'node:diagnostics_channel';
import { TELEMETRY_CHANNELS, type LostMessage } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import { Watchdog } from '@holdfast/watchdog';
import { instrumentHoldfast, type HoldfastInstrumentation } from '@holdfast/otel';
import { startRedisServers, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpanStatusCode } from '@opentelemetry/api';
import { inMemorySdk, sum, useContextManager } from './otel-sdk.js';

describe('@holdfast/otel over a Redlock (kind redlock)', () => {
  useContextManager();
  let servers: RedisServer[] = [];
  let clients: Redis[] = [];
  const prefix = `otelrl${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    servers = await startRedisServers(3);
    clients = servers.map((s) => s.client());
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('records acquisitions, waits, holds, the held gauge, losses, renewal ticks and spans for Redlock locks', async () => {
    const sdk = inMemorySdk();
    const { spans, collect } = sdk;
    const lostMessages: LostMessage[] = [];
    const onLost = (m: unknown) => lostMessages.push(m as LostMessage);
    const redlock = new Redlock(clients, { prefix, instanceTimeoutMs: 250 });
    redlock.on('error', () => undefined);
    // Held before the instrumentation starts: never counted in, so never counted out.
    const early = await redlock.lock('early').acquire({ leaseMs: 30_000 });
    let instrumentation: HoldfastInstrumentation | undefined;
    channel(TELEMETRY_CHANNELS.lost).subscribe(onLost);
    try {
      instrumentation = instrumentHoldfast({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider });

      const first = await redlock.lock('hot').acquire({ leaseMs: 30_000 });
      expect(await redlock.lock('hot').tryAcquire()).toBeNull();
      await first.extend(40_000);
      let points = await collect();
      expect(points('holdfast.lock.held').map((p) => [p.attributes, p.value])).toEqual([[{ 'holdfast.lock.kind': 'redlock' }, 1]]);
      await first.release();
      await early.release();
      // A re-entry (withLock inside withLock) and a watchdog renewal tick.
      const dog = new Watchdog(redlock, { timeoutMs: 900 });
      await redlock.lock('nested').withLock(async () => {
        await redlock.lock('nested').withLock(() => undefined);
        await waitFor(() => spans.getFinishedSpans().some((s) => s.name === 'holdfast.watchdog.renewal'), { timeoutMs: 10_000 });
      });
      await dog.stop();
      const doomed = await redlock.lock('doomed').acquire({ leaseMs: 30_000 });
      await redlock.lock('doomed').forceRelease();
      expect(doomed.signal.aborted).toBe(true);

      points = await collect();
      const redlockKind = { 'holdfast.lock.kind': 'redlock' };
      expect(sum(points('holdfast.lock.acquired'), redlockKind)).toBe(4);
      expect(sum(points('holdfast.lock.wait.duration'), { ...redlockKind, 'holdfast.lock.outcome': 'acquired' })).toBe(4);
      expect(sum(points('holdfast.lock.wait.duration'), { ...redlockKind, 'holdfast.lock.outcome': 'busy' })).toBe(1);
      expect(sum(points('holdfast.lock.lost'), { ...redlockKind, 'holdfast.lock.reason': 'deleted' })).toBe(1);
      // hot and nested released, doomed lost; the early hold's time is unknown and left out.
      expect(sum(points('holdfast.lock.hold.duration'), { ...redlockKind, 'holdfast.lock.outcome': 'released' })).toBe(2);
      expect(sum(points('holdfast.lock.hold.duration'), { ...redlockKind, 'holdfast.lock.outcome': 'lost' })).toBe(1);
      expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([0]);
      expect(sum(points('holdfast.watchdog.renewal.duration'), { 'holdfast.lock.outcome': 'ok' })).toBeGreaterThanOrEqual(1);

      const names = spans.getFinishedSpans().map((s) => s.name);
      expect(names).toEqual(expect.arrayContaining(['holdfast.acquire', 'holdfast.release', 'holdfast.extend', 'holdfast.watchdog.renewal']));
      const extend = spans.getFinishedSpans().find((s) => s.name === 'holdfast.extend')!;
      expect(extend.attributes).toMatchObject({ 'holdfast.lock.kind': 'redlock', 'holdfast.lock.outcome': 'extended' });
      expect(lostMessages.map((m) => [m.name, m.kind, m.reason, m.clientId])).toEqual([['doomed', 'redlock', 'deleted', redlock.id]]);
    } finally {
      instrumentation?.disable();
      channel(TELEMETRY_CHANNELS.lost).unsubscribe(onLost);
      await redlock.close();
      await sdk.shutdown();
    }
  });

  it('a Redlock wait its caller aborted (AbortSignal.timeout) is aborted, without an error status', async () => {
    const sdk = inMemorySdk();
    const holder = new Redlock(clients, { prefix, instanceTimeoutMs: 250 });
    const waiter = new Redlock(clients, { prefix, instanceTimeoutMs: 250 });
    for (const r of [holder, waiter]) r.on('error', () => undefined);
    const instrumentation = instrumentHoldfast({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider });
    try {
      // Held by the other client for the whole wait: only the signal can end it.
      const lease = await holder.lock('contended').acquire({ leaseMs: 30_000 });
      await expect(waiter.lock('contended').acquire({ signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' });
      await lease.release();
      const wait = (await sdk.collect())('holdfast.lock.wait.duration');
      expect(sum(wait, { 'holdfast.lock.kind': 'redlock', 'holdfast.lock.outcome': 'aborted' })).toBe(1);
      expect(sum(wait, { 'holdfast.lock.outcome': 'error' })).toBe(0);
      const span = sdk.spans.getFinishedSpans().find((s) => s.attributes['holdfast.lock.outcome'] === 'aborted')!;
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    } finally {
      instrumentation.disable();
      await Promise.all([holder.close(), waiter.close()]);
      await sdk.shutdown();
    }
  });
});
