import { LockClient } from '@holdfast/core';
import { instrumentHoldfast, type HoldfastInstrumentation, type HoldfastInstrumentationOptions } from '@holdfast/otel';
import { diag, DiagLogLevel, type Meter, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import { sharedRedis } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inMemorySdk, sum, useContextManager, type InMemorySdk } from './otel-sdk.js';

/** A meter provider whose instruments named in `broken` (all when omitted) throw `error` on every add() / record(). */
function brokenMeters(error: Error, healthy?: MeterProvider, broken?: readonly string[]): MeterProvider {
  const throwing = {
    add: () => {
      throw error;
    },
    record: () => {
      throw error;
    },
  };
  return {
    getMeter(name, version, options) {
      const real = healthy?.getMeter(name, version, options);
      const create = (kind: 'createHistogram' | 'createCounter' | 'createUpDownCounter') => (instrument: string, opts?: object) =>
        real && broken && !broken.includes(instrument) ? real[kind](instrument, opts) : throwing;
      const meter = {
        createHistogram: create('createHistogram'),
        createCounter: create('createCounter'),
        createUpDownCounter: create('createUpDownCounter'),
      };
      return meter as unknown as Meter;
    },
  };
}

/** A tracer provider whose spans cannot be started. */
function brokenTracers(error: Error): TracerProvider {
  const tracer = {
    startSpan: () => {
      throw error;
    },
  };
  return { getTracer: () => tracer as never };
}

describe('@holdfast/otel contains its own failures', () => {
  useContextManager();
  let redis: Redis;
  let sdk: InMemorySdk;
  let instrumentation: HoldfastInstrumentation | undefined;
  const clients: LockClient[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  const prefix = `otelerr${Math.random().toString(36).slice(2, 8)}`;
  const client = (name: string) => {
    const c = new LockClient(redis, { prefix, name });
    clients.push(c);
    return c;
  };
  const setup = (options: HoldfastInstrumentationOptions) => {
    instrumentation = instrumentHoldfast(options);
  };
  // Node rethrows a subscriber's exception on the next tick: let any such tick run.
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  beforeAll(async () => {
    redis = (await sharedRedis()).client();
  });
  afterAll(() => {
    redis.disconnect();
  });
  beforeEach(() => {
    sdk = inMemorySdk();
    uncaught.length = 0;
    process.on('uncaughtException', onUncaught);
  });
  afterEach(async () => {
    instrumentation?.disable();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await sdk.shutdown();
    process.off('uncaughtException', onUncaught);
    diag.disable();
  });

  /** Every kind of operation the instrumentation records: each must resolve as without it. */
  const exercise = async () => {
    const a = client('a');
    const b = client('b');
    const lease = await a.lock('e').acquire();
    expect(await b.lock('e').tryAcquire()).toBeNull();
    await expect(b.lock('e').acquire({ signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' });
    await lease.extend(20_000);
    await lease.release();
    await a.lock('e').withLock(() => a.lock('e').withLock(() => undefined));
    const doomed = await a.lock('e2').acquire();
    await a.lock('e2').forceRelease();
    expect(doomed.signal.aborted).toBe(true);
    await settle();
  };

  it('instruments and spans that throw: lock calls resolve, nothing uncaught, each failure goes to onError', async () => {
    const broken = new Error('exporter broke');
    const reported: unknown[] = [];
    setup({ meterProvider: brokenMeters(broken), tracerProvider: brokenTracers(broken), onError: (error) => reported.push(error) });
    await exercise();
    expect(uncaught).toEqual([]);
    expect(reported.length).toBeGreaterThan(0);
    expect(reported.every((error) => error === broken)).toBe(true);
  });

  it('without onError, a failure is logged on the OpenTelemetry diag logger; a throwing onError is logged too', async () => {
    const logged: unknown[][] = [];
    const log = (...args: unknown[]) => void logged.push(args);
    diag.setLogger({ error: log, warn: log, info: log, debug: log, verbose: log }, DiagLogLevel.ERROR);
    const broken = new Error('view misconfigured');
    setup({ meterProvider: brokenMeters(broken) });
    await (await client('a').lock('d').acquire()).release();
    await settle();
    expect(uncaught).toEqual([]);
    expect(logged.some((args) => args.includes(broken))).toBe(true);

    instrumentation!.disable();
    logged.length = 0;
    const handlerFailure = new Error('onError broke');
    setup({
      meterProvider: brokenMeters(broken),
      onError: () => {
        throw handlerFailure;
      },
    });
    await (await client('b').lock('d').acquire()).release();
    await settle();
    expect(uncaught).toEqual([]);
    expect(logged.some((args) => args.includes(handlerFailure))).toBe(true);
  });

  it('one broken instrument leaves the others recording, the held gauge balanced', async () => {
    const reported: unknown[] = [];
    const broken = new Error('counter broke');
    const meterProvider = brokenMeters(broken, sdk.meterProvider, ['holdfast.lock.acquired']);
    setup({ meterProvider, tracerProvider: sdk.tracerProvider, onError: (error) => reported.push(error) });
    const a = client('a');
    const lease = await a.lock('h').acquire();
    let points = await sdk.collect();
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([1]);
    await lease.release();
    await settle();
    points = await sdk.collect();
    expect(points('holdfast.lock.held').map((p) => p.value)).toEqual([0]);
    expect(sum(points('holdfast.lock.wait.duration'), { 'holdfast.lock.outcome': 'acquired' })).toBe(1);
    expect(sum(points('holdfast.lock.hold.duration'), { 'holdfast.lock.outcome': 'released' })).toBe(1);
    expect(sdk.spans.getFinishedSpans().map((s) => s.name)).toEqual(['holdfast.acquire', 'holdfast.release']);
    expect(reported).toEqual([broken]);
    expect(uncaught).toEqual([]);
  });
});
