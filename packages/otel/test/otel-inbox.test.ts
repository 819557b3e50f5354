import { describe, expect, it } from 'vitest';
import { sum, useOtelFixture } from './otel-sdk.js';

describe('@holdfast/otel inbox outcomes and queue wait', () => {
  const fx = useOtelFixture('otelinbox');

  /** An inbox whose handler rejects the message 'fail' (dead after two attempts) and handles the others. */
  function inboxOf(name: string) {
    const inbox = fx.client().inbox<string>(name, {
      maxAttempts: 2,
      retryDelayMs: 1,
      handler: (_key, [message]) => {
        if (message === 'fail') throw new Error('refused');
      },
    });
    return inbox;
  }

  it('counts handled, retried and dead messages, and records queue wait and handler time per handled call', async () => {
    fx.instrument();
    const inbox = inboxOf('otel-chat');
    for (const message of ['a', 'fail', 'b', 'c']) await inbox.post('thread', message);
    await inbox.drain('thread', { waitMs: 10_000 });

    const points = await fx.sdk.collect();
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
    const instrumentation = fx.instrument({ lockNameAttribute: true });
    const inbox = inboxOf('otel-named');
    await inbox.post('thread', 'a');
    await inbox.drain('thread', { waitMs: 10_000 });
    instrumentation.disable();
    await inbox.post('thread', 'b');
    await inbox.drain('thread', { waitMs: 10_000 });

    const messages = (await fx.sdk.collect())('holdfast.inbox.messages');
    expect(sum(messages, { 'holdfast.lock.name': 'otel-named', 'holdfast.lock.outcome': 'handled' })).toBe(1);
    expect(sum(messages)).toBe(1);
  });
});
