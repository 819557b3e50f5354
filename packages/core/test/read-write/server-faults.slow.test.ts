import { fencedWrite, isHoldfastError, type Lease, type LostEvent } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { betweenTicks, pauseThroughExpiries, useServerFaults } from '../server-faults.js';

/** Server expiry (Redis ms) of every holder of a read-write lock, from its sorted set of lease ends (scores <= 0: readers' tokens). */
async function holderExpiries(admin: Redis, expiryKey: string): Promise<number[]> {
  const flat = await admin.zrange(expiryKey, '0', '-1', 'WITHSCORES');
  return flat.filter((_, i) => i % 2 === 1).map(Number).filter((score) => score > 0);
}

/** The kind letter of every holder entry of a read-write lock hash (the writer's name '!' left out). */
function holderKinds(hash: Record<string, string>): string[] {
  return Object.entries(hash)
    .filter(([field]) => field !== '!')
    .map(([, value]) => value.split('|')[0]!);
}

/** Read-write locks on a redis-server of their own, stopped (SIGSTOP) past the lease, or killed and restarted. */
describe('read-write lock: server paused and killed', () => {
  const fx = useServerFaults();

  for (const renewed of [true, false]) {
    it(`paused past the lease (${renewed ? 'renewed by a watchdog' : 'no watchdog'}): every lease lost by its server expiry, none revived, a fresh client writes`, async () => {
      const prefix = fx.prefix();
      // A wide drift margin: a loaded machine's late timers must not eat it.
      const { locks, dog, spy } = fx.locks(prefix, { commandTimeoutMs: 200, driftFactor: 0.2 }, renewed ? { timeoutMs: 1_500 } : undefined);
      const admin = fx.redis();
      const lost: LostEvent[] = [];
      locks.on('lost', (event) => lost.push(event));
      const shared = locks.readWriteLock('paused-shared');
      const exclusive = locks.readWriteLock('paused-exclusive');
      const options = renewed ? {} : { leaseMs: 1_500 };
      const leases: Lease[] = [
        await shared.read.acquire(options),
        await shared.read.acquire(options),
        await exclusive.write.acquire(options),
      ];
      if (renewed) await waitFor(() => spy.calls >= 2 && spy.inFlight === 0, { timeoutMs: 20_000 });

      // What the server holds when it stops: each holder's own expiry.
      const expiries = await betweenTicks(spy, async () => [
        ...(await holderExpiries(admin, shared.read.keys.expiry!)),
        ...(await holderExpiries(admin, exclusive.write.keys.expiry!)),
      ]);
      await pauseThroughExpiries(fx.server, leases, expiries);
      expect(leases.map((lease) => lease.isHeld)).toEqual([false, false, false]);
      expect(lost.map((event) => event.kind).sort()).toEqual(['read', 'read', 'write']);
      for (const event of lost) expect(renewed ? ['unreachable', 'expired'] : ['expired']).toContain(event.reason);
      for (const lease of leases) expect(lease.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST' });
      expect(dog?.watchedCount ?? 0).toBe(0);

      fx.server.resume();
      // Renewals that hung on the stopped server now run against expired holders: none revives one.
      await waitFor(() => spy.inFlight === 0, { timeoutMs: 20_000 });
      expect(await admin.exists(shared.read.keys.lock, exclusive.write.keys.lock)).toBe(0);
      expect(lost).toHaveLength(3);

      const rival = fx.locks(prefix).locks;
      const taken = [
        await rival.readWriteLock('paused-shared').write.tryAcquire({ leaseMs: 10_000 }),
        await rival.readWriteLock('paused-exclusive').write.tryAcquire({ leaseMs: 10_000 }),
      ];
      expect(taken.map((lease) => lease !== null)).toEqual([true, true]);
      // The server kept its fencing counters: each new writer's token is above every earlier one of its lock.
      expect(taken[0]!.token).toBeGreaterThan(Math.max(leases[0]!.token, leases[1]!.token));
      expect(taken[1]!.token).toBeGreaterThan(leases[2]!.token);
      // The stale leases' releases fail, typed, and free nothing of the new writers.
      for (const lease of leases) {
        const error = await lease.release().then(() => undefined, (e: unknown) => e);
        expect(isHoldfastError(error)).toBe(true);
      }
      expect(await rival.readWriteLock('paused-shared').write.currentToken()).toBe(taken[0]!.token);
      expect(await rival.readWriteLock('paused-exclusive').write.currentToken()).toBe(taken[1]!.token);
      for (const lease of taken) await lease!.release();
      expect(await admin.exists(shared.read.keys.lock, exclusive.write.keys.lock)).toBe(0);
    }, 90_000);
  }

  describe('killed (SIGKILL) and restarted empty', () => {
    // The fenced resource lives on a server that is never faulted.
    let resourceServer: RedisServer;
    let resource: Redis;
    beforeAll(async () => {
      resourceServer = await startRedis();
      resource = resourceServer.client();
    });
    afterAll(async () => {
      resource.disconnect();
      await resourceServer.stop();
    });

    it('holds lost (not revived), waiters served after the restart, tokens as documented', async () => {
      const prefix = fx.prefix();
      const { locks, dog } = fx.locks(prefix, { commandTimeoutMs: 300 }, { timeoutMs: 3_000 });
      const other = fx.locks(prefix, { commandTimeoutMs: 300 }).locks;
      const admin = fx.redis();
      const lost: LostEvent[] = [];
      locks.on('lost', (event) => lost.push(event));
      const docKey = `${prefix}:doc`;

      // Writes before the crash move the slot's fencing counter; the resource accepts the last.
      const shared = locks.readWriteLock('crash-shared');
      let lastWrite = 0;
      for (let i = 0; i < 3; i++) {
        await shared.write.withLock(async (lease) => {
          expect(await fencedWrite(resource, docKey, lease.token, `before ${i}`)).toBe(true);
          lastWrite = lease.token;
        });
      }
      const held: Lease[] = [
        await shared.read.acquire(),
        await shared.read.acquire(),
        await locks.readWriteLock('crash-exclusive').write.acquire(),
      ];
      const waitOptions = { waitMs: 60_000, leaseMs: 20_000 };
      const waitingWriter = other.readWriteLock('crash-shared').write.acquire(waitOptions);
      const waitingReaders = [1, 2].map(() => other.readWriteLock('crash-exclusive').read.acquire(waitOptions));
      await waitFor(async () => (await admin.hlen(shared.write.keys.waiters)) === 1, { timeoutMs: 20_000 });
      await waitFor(async () => (await admin.hlen(other.readWriteLock('crash-exclusive').read.keys.waiters)) === 2, {
        timeoutMs: 20_000,
      });

      await fx.server.kill();
      await fx.server.restart();

      // Every hold is reported lost: its renewal finds it gone (or, once a waiter got in, taken).
      await waitFor(() => lost.length === 3, { timeoutMs: 30_000 });
      expect(lost.map((event) => event.kind).sort()).toEqual(['read', 'read', 'write']);
      for (const event of lost) expect(['deleted', 'taken', 'unreachable']).toContain(event.reason);
      expect(held.map((lease) => lease.isHeld)).toEqual([false, false, false]);
      expect(dog!.watchedCount).toBe(0);

      // The waiters blocked on the crashed server are served by the restarted one.
      const writer = await waitingWriter;
      const readers = await Promise.all(waitingReaders);
      expect(writer.isHeld).toBe(true);
      expect(readers.map((lease) => lease.isHeld)).toEqual([true, true]);
      // Not revived: the old holders are nowhere in the restarted server's hashes.
      const sharedHash = await admin.hgetall(shared.read.keys.lock);
      expect(holderKinds(sharedHash)).toEqual(['w']);
      const exclusiveHash = await admin.hgetall(other.readWriteLock('crash-exclusive').read.keys.lock);
      expect(holderKinds(exclusiveHash)).toEqual(['r', 'r']);

      // Without persistence the server forgot its fencing counters too (README: a restarted primary
      // without persistence forgets everything): tokens start again, and the fenced resource, which
      // remembers the last write it accepted, refuses the new writer: no stale write gets in.
      expect(writer.token).toBeLessThan(lastWrite);
      expect(await fencedWrite(resource, docKey, writer.token, 'after')).toBe(false);

      // Among the tokens the restarted server issues, the reader / writer rules hold again.
      await writer.release();
      const reader = await other.readWriteLock('crash-shared').read.acquire();
      expect(reader.token).toBeGreaterThanOrEqual(writer.token);
      await reader.release();
      const nextWriter = await other.readWriteLock('crash-shared').write.acquire();
      expect(nextWriter.token).toBeGreaterThan(Math.max(writer.token, reader.token));
      await nextWriter.release();
      const lateReader = await other.readWriteLock('crash-shared').read.acquire();
      expect(lateReader.token).toBeGreaterThanOrEqual(nextWriter.token);
      await lateReader.release();
      for (const lease of readers) await lease.release();
      const exclusiveWriter = await other.readWriteLock('crash-exclusive').write.acquire();
      expect(exclusiveWriter.token).toBeGreaterThan(Math.max(...readers.map((lease) => lease.token)));
      await exclusiveWriter.release();

      // The stale leases free nothing.
      for (const lease of held) {
        const error = await lease.release().then(() => undefined, (e: unknown) => e);
        expect(isHoldfastError(error)).toBe(true);
      }
      expect(await admin.exists(shared.read.keys.lock, other.readWriteLock('crash-exclusive').read.keys.lock)).toBe(0);
      await resource.del(docKey);
    }, 120_000);
  });
});

/** The same crash with an AOF (appendfsync always): nothing is forgotten, the token promise holds across it. */
describe('read-write lock: server killed and restarted from its AOF', () => {
  const fx = useServerFaults({ persistent: true });

  it('a write held across the crash is still held; tokens keep increasing', async () => {
    const prefix = fx.prefix();
    const { locks } = fx.locks(prefix, { commandTimeoutMs: 300 });
    const rival = fx.locks(prefix, { commandTimeoutMs: 300 }).locks;
    const doc = locks.readWriteLock('durable');
    const before: number[] = [];
    for (let i = 0; i < 3; i++) await doc.write.withLock((lease) => void before.push(lease.token));
    const read = await doc.read.acquire({ leaseMs: 60_000 });
    await read.release();
    const writer = await doc.write.acquire({ leaseMs: 60_000 });

    await fx.server.kill();
    await fx.server.restart();

    const admin = fx.redis();
    await waitFor(async () => (await admin.ping().catch(() => '')) === 'PONG', { timeoutMs: 30_000 });
    // The hold came back with the data: a rival still cannot read.
    expect(await rival.readWriteLock('durable').read.tryAcquire({ leaseMs: 10_000 })).toBeNull();
    expect(writer.isHeld).toBe(true);
    await writer.release();
    const reader = await rival.readWriteLock('durable').read.acquire({ waitMs: 30_000 });
    const issued = [...before, read.token, writer.token];
    expect(reader.token).toBeGreaterThanOrEqual(writer.token);
    await reader.release();
    const next = await rival.readWriteLock('durable').write.acquire({ waitMs: 30_000 });
    expect(next.token).toBeGreaterThan(Math.max(...issued, reader.token));
    await next.release();
  }, 90_000);
});
