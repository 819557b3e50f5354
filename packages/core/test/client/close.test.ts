import { ClientClosedError, LockClient } from '@holdfast/core';
import { startRedis } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay } from '../helpers.js';

function handles(): string[] {
  return process.getActiveResourcesInfo().filter((r) => r !== 'FSReqCallback');
}

describe('close()', () => {
  it('rejects waiters, leaves held leases to their TTL and the user client open', async () => {
    const server = await startRedis();
    const redis = server.client();
    const a = new LockClient(redis, { prefix: 'close' });
    const b = new LockClient(redis, { prefix: 'close' });
    const lease = await a.lock('c').acquire({ leaseMs: 5_000 });
    const waiting = b.lock('c').acquire();
    // It rejects during close(), before its assertion: a handler at once keeps it from being reported unhandled.
    waiting.catch(() => undefined);
    await delay(50);
    await b.close();
    await expect(waiting).rejects.toBeInstanceOf(ClientClosedError);
    expect(() => b.lock('c')).toThrow(ClientClosedError);
    await a.close();
    expect(lease.isHeld).toBe(false);
    expect(await redis.ping()).toBe('PONG');
    // Not released: the lock stays until its TTL.
    const c = new LockClient(redis, { prefix: 'close' });
    expect(await c.lock('c').isLocked()).toBe(true);
    await c.close();
    await server.stop();
  });

  it('{ release: true } releases every held lease', async () => {
    const server = await startRedis();
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: 'close-release' });
    const outer = await locks.lock('r').acquire();
    const other = await locks.lock('s').acquire();
    expect(locks.heldCount).toBe(2);
    await locks.close({ release: true });
    expect(outer.isHeld).toBe(false);
    expect(other.isHeld).toBe(false);
    const probe = new LockClient(redis, { prefix: 'close-release' });
    expect(await probe.lock('r').isLocked()).toBe(false);
    expect(await probe.lock('s').isLocked()).toBe(false);
    await probe.close();
    await server.stop();
  });

  it('leaves no active handle behind once the user client is closed too', async () => {
    const server = await startRedis();
    const before = handles().length;
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: 'handles', subscriptionLingerMs: 60_000 });
    const holder = await locks.lock('h').acquire({ leaseMs: 10_000 });
    const other = new LockClient(redis, { prefix: 'handles' });
    const waiting = other.lock('h').acquire({ waitMs: 5_000 });
    await delay(50);
    await holder.release();
    await (await waiting).release();
    await locks.close();
    await other.close();
    redis.disconnect();
    await delay(100);
    expect(handles().length).toBeLessThanOrEqual(before);
    await server.stop();
  });
});
