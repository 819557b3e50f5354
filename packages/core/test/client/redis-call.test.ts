import { RedisCommandError } from '@holdfast/core';
import { callRedis } from '@holdfast/core/internal';
import { describe, expect, it } from 'vitest';

const policy = { commandTimeoutMs: 5_000, retries: 1 };

describe('callRedis failures', () => {
  it("names a client error that has no message by its class, and keeps a message it has", async () => {
    class QueueDroppedError extends Error {
      override name = 'QueueDroppedError';
    }
    const silent = await callRedis(() => Promise.reject(new QueueDroppedError('')), policy).catch((e: unknown) => e);
    expect(silent).toBeInstanceOf(RedisCommandError);
    expect((silent as Error).message).toBe('Redis call failed: QueueDroppedError (no message)');
    const told = await callRedis(() => Promise.reject(new Error('WRONGTYPE Operation')), policy).catch((e: unknown) => e);
    expect((told as Error).message).toBe('Redis call failed: WRONGTYPE Operation');
  });
});
