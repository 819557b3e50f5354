import { LockClient } from '@holdfast/core';
import { instrumentHoldfast, type HoldfastInstrumentation } from '@holdfast/otel';
import { sharedRedis } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { inMemorySdk, sum, useContextManager, type InMemorySdk } from './otel-sdk.js';

describe('@holdfast/otel inbox outcomes and queue wait', () => {
  useContextManager();
  let redis: Redis;
  let sdk: InMemorySdk;
  let instrumentation: HoldfastInstrumentation | undefined;
  const clients: LockClient[] = [];
  const prefix = `otelinbox${Math.random().toString(36).slice(2, 8)}`;

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

  /** An inbox whose handler rejects the message 'fail' (dead after two attempts) and handles the others. */
  function inboxOf(name: string) {
    const locks = new LockClient(redis, { prefix });
    clients.push(locks);
    const inbox = locks.inbox<string>(name, {
      maxAttempts: 2,
      retryDelayMs: 1,
      handler: (_key, [message]) => {
        if (message === 'fail') throw new Error('refused');
      },
    });
    return inbox;
  }

  it('counts handled, retried and dead messages, and records queue wait and handler time per handled call', async () => {
    instrumentation = instrumentHoldfast({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider });
    const inbox = inboxOf('otel-chat');
    for (const message of ['a', 'fail', 'b', 'c']) await inbox.post('thread', message);
    await inbox.drain('thread', { waitMs: 10_000 });

    const points = await sdk.collect();
    const messages = points('holdfast.inbox.messages');
    expect(sum(messages, { 'holdfast.lock.kind': 'inbox', 'holdfast.lock.outcome': 'handled' })).toBe(3);
    expect(sum(messages, { 'holdfast.lock.outcome': 'retried' })).toBe(1);
    expect(sum(messages, { 'holdfast.lock.outcome': 'dead', 'holdfast.lock.reason': 'attempts' })).toBe(1);
    expect(sum(points('holdfast.inbox.queue_wait.duration'), { 'holdfast.lock.kind': 'inbox' })).toBe(3);
    expect(sum(points('holdfast.inbox.handler.duration'), { 'holdfast.lock.kind': 'inbox' })).toBe(3);
    // The inbox's name only when asked (and never the key).
    expect(messages.every((p) => !('holdfast.lock.name' in p.attributes))).toBe(true);
  });

  it('adds the inbox name with lockNameAttribute, and records nothing once disabled', async () => {
    instrumentation = instrumentHoldfast({ meterProvider: sdk.meterProvider, tracerProvider: sdk.tracerProvider, lockNameAttribute: true });
    const inbox = inboxOf('otel-named');
    await inbox.post('thread', 'a');
    await inbox.drain('thread', { waitMs: 10_000 });
    instrumentation.disable();
    await inbox.post('thread', 'b');
    await inbox.drain('thread', { waitMs: 10_000 });

    const messages = (await sdk.collect())('holdfast.inbox.messages');
    expect(sum(messages, { 'holdfast.lock.name': 'otel-named', 'holdfast.lock.outcome': 'handled' })).toBe(1);
    expect(sum(messages)).toBe(1);
  });
});
