import { InvalidArgumentError, LockClient, MAX_DURATION_MS, MAX_NAME_BYTES } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

describe('bad input fails fast with InvalidArgumentError', () => {
  const fx = useRedis();

  it.each([
    ['', 'a non-empty string'],
    [42, 'a non-empty string'],
    [undefined, 'a non-empty string'],
    ['x'.repeat(MAX_NAME_BYTES + 1), `at most ${MAX_NAME_BYTES} bytes`],
    // 342 characters of 3 bytes each: short in characters, too long in bytes.
    ['€'.repeat(342), `at most ${MAX_NAME_BYTES} bytes`],
    ['😀'.repeat(MAX_NAME_BYTES / 4 + 1), `at most ${MAX_NAME_BYTES} bytes`],
  ])('lock name %j', async (name, phrase) => {
    const locks = await fx.client();
    expect(() => locks.lock(name as string)).toThrow(InvalidArgumentError);
    expect(() => locks.lock(name as string)).toThrow(phrase);
  });

  it('lock names up to the byte limit are taken, whatever their characters', async () => {
    const locks = await fx.client();
    for (const name of ['x'.repeat(MAX_NAME_BYTES), '€'.repeat(341), '😀'.repeat(MAX_NAME_BYTES / 4), 'é'.repeat(MAX_NAME_BYTES / 2)]) {
      expect(locks.lock(name).name).toBe(name);
    }
  });

  it.each([NaN, 0, -5, 1.5, MAX_DURATION_MS + 1, '100', Infinity])('leaseMs %j', async (leaseMs) => {
    const locks = await fx.client();
    const lock = locks.lock('v');
    await expect(lock.acquire({ leaseMs: leaseMs as number })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(lock.tryAcquire({ leaseMs: leaseMs as number })).rejects.toThrow('Expected `leaseMs` to be');
    expect(await lock.isLocked()).toBe(false);
  });

  it.each([NaN, 0, -1, 2.5, MAX_DURATION_MS + 1])('waitMs %j', async (waitMs) => {
    const locks = await fx.client();
    await expect(locks.lock('v').acquire({ waitMs })).rejects.toThrow('Expected `waitMs` to be');
  });

  it('the phrasing names the option and the value', async () => {
    const locks = await fx.client();
    await expect(locks.lock('v').acquire({ leaseMs: -5 })).rejects.toThrow(
      'Expected `leaseMs` to be a positive integer, got `-5`',
    );
  });

  it('client options are checked at construction', async () => {
    const redis = await fx.redis();
    expect(() => new LockClient(redis, { prefix: 'a{b' })).toThrow(InvalidArgumentError);
    expect(() => new LockClient(redis, { prefix: '' })).toThrow(InvalidArgumentError);
    expect(() => new LockClient(redis, { leaseMs: 0 })).toThrow('Expected `leaseMs`');
    expect(() => new LockClient(redis, { commandTimeoutMs: -1 })).toThrow('Expected `commandTimeoutMs`');
    expect(() => new LockClient(redis, { driftFactor: 2 })).toThrow('Expected `driftFactor`');
    expect(() => new LockClient(redis, { minReplicas: -1 })).toThrow(
      'Expected `minReplicas` to be a non-negative integer, got `-1`',
    );
    expect(() => new LockClient(redis, { minReplicas: 1.5 })).toThrow('Expected `minReplicas`');
    expect(() => new LockClient(redis, { replicaTimeoutMs: 0 })).toThrow(
      'Expected `replicaTimeoutMs` to be a positive integer, got `0`',
    );
    expect(() => new LockClient({} as never)).toThrow('Expected `redis` to be an ioredis or node-redis client, got `object`');
  });

  it('signal must be an AbortSignal, extend a positive integer, withLock a function', async () => {
    const locks = await fx.client();
    const lock = locks.lock('v2');
    await expect(lock.acquire({ signal: {} as AbortSignal })).rejects.toThrow('Expected `signal`');
    await expect(lock.withLock(undefined as never)).rejects.toThrow('Expected `fn`');
    const lease = await lock.acquire();
    await expect(lease.extend(-1)).rejects.toThrow('Expected `leaseMs`');
    await lease.release();
  });

  it('names with braces, colons and unicode are ordinary names', async () => {
    const locks = await fx.client();
    for (const name of ['{tag}', 'a:b:c', '}{', 'ünï']) {
      const lease = await locks.lock(name).acquire();
      expect(lease.name).toBe(name);
      await lease.release();
    }
  });
});
