import { InvalidArgumentError, LockClient, fencedWrite, readFenced } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { clientMode } from '@holdfast/test-utils';
import { delay, useRedis } from '../helpers.js';

/** Bad input and client options users really pass (issue: "Bad input and errors"). */
describe('input and client options', () => {
  const fx = useRedis();

  it.each([NaN, Infinity, -Infinity])('%s is printed as itself in validation messages', async (value) => {
    const locks = await fx.client();
    await expect(locks.lock('nan').acquire({ leaseMs: value })).rejects.toThrow(
      `Expected \`leaseMs\` to be a positive integer, got \`${String(value)}\``,
    );
  });

  it('null means the default in per-call options, as in client options', async () => {
    const locks = await fx.client({ leaseMs: null as never });
    const lease = await locks.lock('nulls').acquire({ leaseMs: null, waitMs: null, signal: null } as never);
    expect(lease.leaseMs).toBe(30_000);
    await lease.release();
    expect(await locks.lock('nulls').tryAcquire(null as never)).not.toBeNull();
  });

  it('close() takes a boolean release flag only', async () => {
    const locks = await fx.client();
    await expect(locks.close({ release: 'no' } as never)).rejects.toThrow(
      'Expected `release` to be a boolean, got `"no"`',
    );
    expect(locks.closed).toBe(false);
    await locks.close({ release: false });
    expect(locks.closed).toBe(true);
  });

  it('an object that is not a Redis client is an InvalidArgumentError, not a TypeError', () => {
    expect(() => new LockClient({ evalsha() {} } as never)).toThrow(InvalidArgumentError);
    expect(() => new LockClient(null as never)).toThrow('Expected `redis` to be an ioredis or node-redis client, got `null`');
  });

  it('fencedWrite with a value that is not a string is an InvalidArgumentError', async () => {
    const redis = await fx.redis();
    await expect(fencedWrite(redis, `${fx.prefix}:res`, 1, 42 as never)).rejects.toThrow(
      'Expected `value` to be a string, got `42`',
    );
    expect(await readFenced(redis, `${fx.prefix}:res`)).toBeNull();
  });

  it.each(['job\uD800', 'job\uDC00', '\uDE00emoji', 'a\uD83D'])('a name with an unpaired surrogate (%j) is refused', async (name) => {
    const locks = await fx.client();
    expect(() => locks.lock(name)).toThrow(InvalidArgumentError);
    expect(() => locks.lock(name)).toThrow('no unpaired UTF-16 surrogate');
  });

  it('names with paired surrogates (emoji) stay distinct locks', async () => {
    const locks = await fx.client();
    const a = await locks.lock('job\u{1F600}').acquire();
    expect(await locks.lock('job\uFFFD').tryAcquire()).not.toBeNull();
    await a.release();
  });

  it.each(['app\uD800', 'app\uDC00'])('a prefix with an unpaired surrogate (%j) is refused', async (prefix) => {
    const redis = await fx.redis();
    expect(() => new LockClient(redis, { prefix })).toThrow('Expected `prefix` to be a well-formed string');
  });

  it('many LockClients on one client print no MaxListenersExceededWarning', async () => {
    const redis = await fx.redis();
    // What holdfast listens to for a lost connection: ioredis's `close`, node-redis's `reconnecting`.
    const lostEvent = clientMode === 'node-redis' ? 'reconnecting' : 'close';
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    // ioredis itself listens for 'close' while it (re)connects: count on a ready client.
    await redis.ping();
    const before = redis.listenerCount(lostEvent);
    try {
      const clients = Array.from({ length: 15 }, () => new LockClient(redis, { prefix: fx.prefix }));
      expect(redis.listenerCount(lostEvent)).toBe(before + 1);
      await Promise.all(clients.map((c) => c.close()));
      await delay(10);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    await redis.ping();
    expect(redis.listenerCount(lostEvent)).toBe(before);
  });

  it('ioredis stringNumbers: true decodes every script reply', async () => {
    const server = await fx.server();
    const redis = server.client({ stringNumbers: true });
    try {
      const locks = new LockClient(redis, { prefix: fx.prefix });
      const lock = locks.lock('string-numbers');
      const counts = await lock.withLock(async (outer) => {
        const inner = await lock.acquire();
        await inner.release();
        return [outer.holdCount, inner.holdCount, typeof outer.token];
      });
      expect(counts).toEqual([1, 2, 'number']);
      const lease = await lock.acquire();
      await lease.extend(10_000);
      expect(await lock.currentToken()).toBe(lease.token);
      // A waiter queued behind the lease is handed the lock on release.
      const waiting = lock.acquire({ waitMs: 10_000 });
      await delay(20);
      await lease.release();
      await (await waiting).release();
      expect(await fencedWrite(redis, `${fx.prefix}:sn`, 5, 'v')).toBe(true);
      expect(await fencedWrite(redis, `${fx.prefix}:sn`, 4, 'w')).toBe(false);
      expect(await lock.forceRelease()).toBe(false);
      await locks.close();
    } finally {
      redis.disconnect();
    }
  });
});
