import { LockClient } from '@holdfast/core';
import { instrumentHoldfast, type HoldfastInstrumentation } from '@holdfast/otel';
import { sharedRedis, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inMemorySdk, useContextManager, type InMemorySdk } from './otel-sdk.js';

describe('@holdfast/otel outcomes of idempotency keys and flights', () => {
  useContextManager();
  let redis: Redis;
  let sdk: InMemorySdk;
  let instrumentation: HoldfastInstrumentation | undefined;
  const clients: LockClient[] = [];
  const prefix = `otelidem${Math.random().toString(36).slice(2, 8)}`;

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

  it('acquired where fn ran, replayed, conflict, in-progress', async () => {
    const locks = new LockClient(redis, { prefix });
    clients.push(locks);
    const idem = locks.idempotency('pay');
    await idem.run('a', () => 1, { fingerprint: 'x' });
    await idem.run('a', () => 2, { fingerprint: 'x' });
    await expect(idem.run('a', () => 3, { fingerprint: 'y' })).rejects.toMatchObject({ code: 'ERR_IDEMPOTENCY_CONFLICT' });
    let open!: () => void;
    const running = idem.run('b', () => new Promise<number>((resolve) => (open = () => resolve(4))));
    await waitFor(async () => (await idem.get('b'))?.state === 'running');
    await expect(idem.run('b', () => 5, { waitMs: 0 })).rejects.toMatchObject({ code: 'ERR_IDEMPOTENCY_IN_PROGRESS' });
    open();
    await running;
    const spans = sdk.spans.getFinishedSpans().filter((s) => s.name === 'holdfast.acquire');
    expect(spans.map((s) => [s.attributes['holdfast.lock.kind'], s.attributes['holdfast.lock.outcome']])).toEqual([
      ['idempotency', 'acquired'],
      ['idempotency', 'replayed'],
      ['idempotency', 'conflict'],
      ['idempotency', 'acquired'],
      ['idempotency', 'in-progress'],
    ]);
  });
});
