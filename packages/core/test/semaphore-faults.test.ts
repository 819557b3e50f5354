import { LockClient } from '@holdfast/core';
import { FaultProxy, startRedis, type RedisServer } from '@holdfast/test-utils';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/** A semaphore under lost replies and script cache loss: a dedicated server, a proxy in front of it. */
describe('semaphore faults', () => {
  let server: RedisServer;
  let proxy: FaultProxy | undefined;
  const cleanup: (() => Promise<unknown> | unknown)[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    server = await startRedis();
    process.on('unhandledRejection', onUnhandled);
  });
  afterEach(async () => {
    if (proxy) await proxy.close();
    proxy = undefined;
    for (const fn of cleanup.splice(0).reverse()) await fn();
    expect(unhandled).toEqual([]);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await server.stop();
  });

  async function throughProxy() {
    proxy = await FaultProxy.start({ host: server.host, port: server.port });
    const redis = new Redis({ host: proxy.host, port: proxy.port });
    redis.on('error', () => undefined);
    const locks = new LockClient(redis, { prefix: 'semfaults' });
    cleanup.push(() => redis.disconnect(), () => locks.close());
    return locks;
  }

  /** Holders' permits as stored: never more than the permits the caller holds. */
  async function holders(key: string): Promise<number[]> {
    const admin = server.client();
    const hash = await admin.hgetall(key);
    admin.disconnect();
    return Object.entries(hash)
      .filter(([field]) => field !== '#' && field !== '+')
      .map(([, value]) => Number(value.split('|')[0]));
  }

  it('a lost reply to an acquisition grants once; a lost reply to a release still releases', async () => {
    const locks = await throughProxy();
    const sem = locks.semaphore('lost-reply', { permits: 3 });
    const events: string[] = [];
    locks.on('released', () => events.push('released'));
    locks.on('lost', () => events.push('lost'));
    for (let i = 0; i < 10; i++) {
      let dropped = proxy!.dropNextReply();
      const lease = await sem.acquire({ permits: 2 });
      await dropped;
      expect(await holders(sem.keys.lock)).toEqual([2]);
      expect(await sem.availablePermits()).toBe(1);
      dropped = proxy!.dropNextReply();
      await lease.release();
      await dropped;
      expect(await holders(sem.keys.lock)).toEqual([]);
      expect(await sem.availablePermits()).toBe(3);
    }
    expect(events).toEqual(Array(10).fill('released'));
  }, 60_000);

  it('SCRIPT FLUSH breaks nothing', async () => {
    const admin = server.client();
    cleanup.push(() => admin.disconnect());
    const locks = new LockClient(server.client(), { prefix: 'semflush' });
    cleanup.push(() => locks.close());
    const sem = locks.semaphore('flushed', { permits: 2 });
    for (let i = 0; i < 3; i++) {
      await admin.script('FLUSH');
      const lease = await sem.acquire({ permits: 2 });
      await admin.script('FLUSH');
      await lease.extend(5_000);
      await admin.script('FLUSH');
      expect(await sem.availablePermits()).toBe(0);
      await admin.script('FLUSH');
      await lease.release();
    }
    expect(await sem.availablePermits()).toBe(2);
  });
});
