import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { instrumentHoldfast, type HoldfastInstrumentation } from '@holdfast/otel';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { sharedRedis, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

describe('@holdfast/otel with the OpenTelemetry SDK in-memory exporters', () => {
  const contextManager = new AsyncLocalStorageContextManager();
  let redis: Redis;
  let spans: InMemorySpanExporter;
  let metricExporter: InMemoryMetricExporter;
  let reader: PeriodicExportingMetricReader;
  let tracerProvider: BasicTracerProvider;
  let instrumentation: HoldfastInstrumentation | undefined;
  const clients: LockClient[] = [];
  const prefix = `otel${Math.random().toString(36).slice(2, 8)}`;
  const client = (name: string) => {
    const c = new LockClient(redis, { prefix, name });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    context.setGlobalContextManager(contextManager.enable());
    redis = (await sharedRedis()).client();
  });
  afterAll(() => {
    context.disable();
    redis.disconnect();
  });
  beforeEach(() => {
    spans = new InMemorySpanExporter();
    tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    // Exports only when the test asks (forceFlush), never on a clock.
    reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  });
  afterEach(async () => {
    instrumentation?.disable();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await reader.shutdown();
  });

  const setup = (lockNameAttribute = false) => {
    const meterProvider = new MeterProvider({ readers: [reader] });
    instrumentation = instrumentHoldfast({ meterProvider, tracerProvider, lockNameAttribute });
  };
  const collect = async () => {
    await reader.forceFlush();
    const metrics = metricExporter.getMetrics().at(-1)?.scopeMetrics.flatMap((s) => s.metrics) ?? [];
    return (name: string) => (metrics.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as DataPoint<unknown>[];
  };
  const sum = (points: DataPoint<unknown>[], match: Record<string, unknown> = {}) =>
    points
      .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
      .reduce((total, p) => total + (typeof p.value === 'number' ? p.value : (p.value as Histogram).count), 0);

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

  it('never counts out a hold it did not count in: holds taken before it started, multi-lock groups', async () => {
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
    // One same-slot group taken by one script call: its parts are not traced acquisitions.
    const group = await a.multiLock(['{g}x', '{g}y']).acquire();
    await group.release();
    points = await collect();
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([1]);
    expect(sum(points('holdfast.lock.lost'), { 'holdfast.lock.reason': 'deleted' })).toBe(1);
    // The early holds' times are unknown (not recorded while nobody listened) and left out;
    // the group's parts were granted while it listened.
    expect(sum(points('holdfast.lock.hold.duration'))).toBe(2);
    await after.release();
    points = await collect();
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([0]);
    expect(sum(points('holdfast.lock.hold.duration'), { 'holdfast.lock.outcome': 'released' })).toBe(3);
  });

  it('spans: acquire (with its wait) and release parented to the caller, renewal ticks on their own', async () => {
    setup();
    const a = client('a');
    const dog = new Watchdog(a, { timeoutMs: 900 });
    const caller = tracerProvider.getTracer('app');
    await caller.startActiveSpan('checkout', async (parent) => {
      await a.lock('traced').withLock(async () => {
        await waitFor(async () => spans.getFinishedSpans().some((s) => s.name === 'holdfast.watchdog.renewal'), { timeoutMs: 10_000 });
      });
      parent.end();
    });
    await dog.stop();
    const finished = spans.getFinishedSpans();
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

  it('disable() stops recording', async () => {
    setup();
    instrumentation!.disable();
    const a = client('a');
    await (await a.lock('quiet').acquire()).release();
    const points = await collect();
    expect(points('holdfast.lock.acquired')).toEqual([]);
    expect(spans.getFinishedSpans()).toEqual([]);
  });
});
