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
import { LockClient, type LockClientOptions } from '@holdfast/core';
import { instrumentHoldfast, type HoldfastInstrumentation, type HoldfastInstrumentationOptions } from '@holdfast/otel';
import { sharedRedis } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';

/** The data points of one metric, by its name, as the last export had them. */
export type Points = (name: string) => DataPoint<unknown>[];

/**
 * Installs the async-hooks context manager for the describe block it is called in
 * (so a span started inside a caller's active span is its child), removed after it.
 */
export function useContextManager(): void {
  const contextManager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
  });
  afterAll(() => {
    context.disable();
  });
}

/** The OpenTelemetry SDK of one test: a tracer provider and a meter provider, each exporting to memory. */
export type InMemorySdk = ReturnType<typeof inMemorySdk>;

/** A new {@link InMemorySdk}: `collect()` exports the metrics now, `shutdown()` stops the metric reader. */
export function inMemorySdk() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exports only when the test asks (forceFlush), never on a clock.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    spans,
    tracerProvider,
    meterProvider,
    async collect(): Promise<Points> {
      await reader.forceFlush();
      const metrics = exporter.getMetrics().at(-1)?.scopeMetrics.flatMap((s) => s.metrics) ?? [];
      return (name) => (metrics.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as DataPoint<unknown>[];
    },
    shutdown: () => reader.shutdown(),
  };
}

/** The total of the points whose attributes include `match`: values of counters, counts of histograms. */
export function sum(points: DataPoint<unknown>[], match: Record<string, unknown> = {}): number {
  return points
    .filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
    .reduce((total, p) => total + (typeof p.value === 'number' ? p.value : (p.value as Histogram).count), 0);
}

/** What {@link useOtelFixture} gives each test of its describe block. */
export interface OtelFixture {
  /** A client of the shared server (open for the whole block). */
  readonly redis: Redis;
  /** This test's SDK (new for each test, shut down after it). */
  readonly sdk: InMemorySdk;
  /** The block's own key prefix. */
  readonly prefix: string;
  /** A LockClient under the block's prefix, closed after the test. */
  client(options?: LockClientOptions): LockClient;
  /** Instruments holdfast with this test's SDK (and `options`); disabled after the test. */
  instrument(options?: HoldfastInstrumentationOptions): HoldfastInstrumentation;
}

/**
 * The set-up of a describe block that instruments holdfast: the context manager, the shared
 * server, a fresh in-memory SDK per test, and after each test the instrumentation disabled, the
 * clients closed and the SDK shut down.
 */
export function useOtelFixture(prefix: string): OtelFixture {
  useContextManager();
  let redis: Redis | undefined;
  let sdk: InMemorySdk | undefined;
  let instrumentation: HoldfastInstrumentation | undefined;
  const clients: LockClient[] = [];
  const fixture: OtelFixture = {
    get redis() {
      return redis!;
    },
    get sdk() {
      return sdk!;
    },
    prefix: `${prefix}${Math.random().toString(36).slice(2, 8)}`,
    client(options = {}) {
      const locks = new LockClient(redis!, { prefix: fixture.prefix, ...options });
      clients.push(locks);
      return locks;
    },
    instrument(options = {}) {
      instrumentation = instrumentHoldfast({ meterProvider: sdk!.meterProvider, tracerProvider: sdk!.tracerProvider, ...options });
      return instrumentation;
    },
  };
  beforeAll(async () => {
    redis = (await sharedRedis()).client();
  });
  afterAll(() => {
    redis?.disconnect();
  });
  beforeEach(() => {
    sdk = inMemorySdk();
  });
  afterEach(async () => {
    instrumentation?.disable();
    instrumentation = undefined;
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sdk?.shutdown();
  });
  return fixture;
}
