import { LockClient } from '@holdfast/core';
import { FaultProxy, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/** Read-write lock under faults: a dedicated server, a proxy in front of it. */
describe('read-write lock faults', () => {
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

  async function throughProxy(options: { driftFactor?: number } = {}) {
    proxy = await FaultProxy.start({ host: server.host, port: server.port });
    const redis = new Redis({ host: proxy.host, port: proxy.port });
    redis.on('error', () => undefined);
    const locks = new LockClient(redis, { prefix: 'rwf', ...options });
    cleanup.push(() => redis.disconnect(), () => locks.close());
    return locks;
  }

  /** Hold counts per holder kind in Redis, read beside the proxy. */
  async function holds(locks: LockClient, name: string): Promise<string[]> {
    const admin = server.client();
    const hash = await admin.hgetall(locks.readWriteLock(name).read.keys.lock);
    admin.disconnect();
    return Object.values(hash).map((v) => `${v.split('|')[0]}${v.split('|')[1]}`).sort();
  }

  it('a lost reply after apply leaves the hold counts exact: read, re-entry, downgrade, releases', async () => {
    const locks = await throughProxy();
    const doc = locks.readWriteLock('lost-reply');
    for (let i = 0; i < 10; i++) {
      let dropped = proxy!.dropNextReply();
      await doc.write.withLock(async () => {
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['w1']);
        dropped = proxy!.dropNextReply();
        const inner = await doc.write.acquire();
        await dropped;
        expect(inner.holdCount).toBe(2);
        expect(await holds(locks, 'lost-reply')).toEqual(['w2']);
        dropped = proxy!.dropNextReply();
        await inner.release();
        await dropped;
        dropped = proxy!.dropNextReply();
        const read = await doc.read.acquire();
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['r1', 'w1']);
        dropped = proxy!.dropNextReply();
        await read.release();
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['w1']);
      });
      expect(await holds(locks, 'lost-reply')).toEqual([]);
      dropped = proxy!.dropNextReply();
      await doc.read.withLock(async () => {
        await dropped;
        const inner = await doc.read.acquire();
        expect(inner.holdCount).toBe(2);
        dropped = proxy!.dropNextReply();
        await inner.release();
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['r1']);
      });
      expect(await holds(locks, 'lost-reply')).toEqual([]);
    }
  }, 60_000);

  it('SCRIPT FLUSH breaks nothing', async () => {
    const admin = server.client();
    const redis = server.client();
    const locks = new LockClient(redis, { prefix: 'rw-flush' });
    cleanup.push(() => admin.disconnect(), () => redis.disconnect(), () => locks.close());
    const doc = locks.readWriteLock('flushed');
    for (let i = 0; i < 3; i++) {
      await admin.script('FLUSH');
      const read = await doc.read.acquire();
      await admin.script('FLUSH');
      await read.extend(5_000);
      expect(await doc.read.isLocked()).toBe(true);
      await admin.script('FLUSH');
      await read.release();
      await admin.script('FLUSH');
      await doc.write.withLock(async () => {
        await admin.script('FLUSH');
        expect(await doc.write.remainingTtlMs()).toBeGreaterThan(0);
      });
      await admin.script('FLUSH');
      expect(await doc.forceRelease()).toBe(false);
    }
  });

  it('an unreachable server: a read lease is reported lost before the server expires it', async () => {
    // A wide margin (driftFactor 0.25: 502 ms) keeps a busy machine's timer lateness out of it.
    const locks = await throughProxy({ driftFactor: 0.25 });
    const admin = server.client();
    cleanup.push(() => admin.disconnect());
    const doc = locks.readWriteLock('unreachable');
    const lost: string[] = [];
    let pttlAtLoss = -1;
    const seen = new Promise<void>((resolve) => {
      locks.on('lost', (e) => {
        lost.push(`${e.kind}:${e.reason}`);
        void admin.pttl(doc.read.keys.lock).then((p) => {
          pttlAtLoss = p;
          resolve();
        });
      });
    });
    locks.on('error', () => undefined);
    await doc.read.acquire({ leaseMs: 2_000 });
    proxy!.blackhole(true);
    await seen;
    expect(lost).toEqual(['read:expired']);
    expect(pttlAtLoss).toBeGreaterThan(0);
    proxy!.blackhole(false);
    await waitFor(async () => (await admin.exists(doc.read.keys.lock)) === 0, { timeoutMs: 10_000 });
  }, 30_000);
});
