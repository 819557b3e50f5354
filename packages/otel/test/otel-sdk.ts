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
import { afterAll, beforeAll } from 'vitest';

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
