import {
  ClientClosedError,
  InvalidArgumentError,
  LockLostError,
  LockTimeoutError,
  PermitCountMismatchError,
  type AcquiredEvent,
  type LostEvent,
  type ReleasedEvent,
} from '@holdfast/core';
import { commandStats, commandStatsDelta, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

describe('semaphore', () => {
  const fx = useRedis();

  it('hands out at most `permits` at once and counts them exactly', async () => {
    const locks = await fx.client();
    const gpus = locks.semaphore('count', { permits: 4 });
    expect(await gpus.availablePermits()).toBe(4);
    const a = await gpus.acquire({ permits: 2 });
    const b = await gpus.acquire({ permits: 1 });
    expect(a.permits).toBe(2);
    expect(b.holdCount).toBe(1);
    expect(a.name).toBe('count');
    expect(await gpus.availablePermits()).toBe(1);
    expect(await gpus.tryAcquire({ permits: 2 })).toBeNull();
    const c = await gpus.tryAcquire();
    expect(c?.permits).toBe(1);
    expect(await gpus.availablePermits()).toBe(0);
    await a.release();
    expect(await gpus.availablePermits()).toBe(2);
    await b.release();
    await c!.release();
    expect(await gpus.availablePermits()).toBe(4);
    expect(a.isHeld).toBe(false);
  });

  it('tokens are strictly increasing per semaphore', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('tokens', { permits: 3 });
    const tokens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const lease = await sem.acquire({ permits: 1 + (i % 3) });
      tokens.push(lease.token);
      await lease.release();
    }
    const held = await Promise.all([sem.acquire(), sem.acquire(), sem.acquire()]);
    tokens.push(...held.map((l) => l.token).sort((x, y) => x - y));
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
    await Promise.all(held.map((l) => l.release()));
  });

  it('a holder that never releases gives its permits back when its lease ends', async () => {
    const crashed = await fx.client();
    const other = await fx.client();
    const sem = other.semaphore('crash', { permits: 2 });
    const lease = await crashed.semaphore('crash', { permits: 2 }).acquire({ permits: 2, leaseMs: 400 });
    // Closing without release leaves the permits in Redis, as a crashed process would.
    await crashed.close();
    expect(lease.isHeld).toBe(false);
    // A waiter queued behind it gets them once the lease ends (its re-check is bounded by that lease).
    const next = await sem.acquire({ permits: 2, waitMs: 20_000 });
    expect(next.token).toBeGreaterThan(lease.token);
    expect(await sem.availablePermits()).toBe(0);
    await next.release();
    // And a bare count leaves out an expired holder's permits.
    const third = await fx.client();
    const gone = await third.semaphore('crash', { permits: 2 }).acquire({ leaseMs: 300 });
    await third.close();
    await waitFor(async () => (await sem.availablePermits()) === 2, { timeoutMs: 20_000 });
    expect(gone.isHeld).toBe(false);
  });

  it('waiters are served first come, first served: a large request is not overtaken by small ones', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('fifo', { permits: 3 });
    const holder = await sem.acquire({ permits: 2, leaseMs: 20_000 });
    const order: string[] = [];
    const big = sem.acquire({ permits: 3, waitMs: 20_000 }).then((l) => (order.push('big'), l));
    await waitFor(async () => (await (await fx.redis()).llen(sem.keys.queue)) === 1);
    // One permit is free, but the request queued ahead needs three.
    expect(await sem.tryAcquire({ permits: 1 })).toBeNull();
    const small = sem.acquire({ permits: 1, waitMs: 20_000 }).then((l) => (order.push('small'), l));
    await waitFor(async () => (await (await fx.redis()).llen(sem.keys.queue)) === 2);
    expect(order).toEqual([]);
    await holder.release();
    const bigLease = await big;
    expect(order).toEqual(['big']);
    await bigLease.release();
    await (await small).release();
    expect(order).toEqual(['big', 'small']);
  });

  it('one release hands permits to every waiter that now fits, over pub/sub, without polling', async () => {
    const holderClient = await fx.client();
    const waiterClient = await fx.client();
    const redis = await fx.redis();
    const holder = await holderClient.semaphore('handoff', { permits: 3 }).acquire({ permits: 3, leaseMs: 30_000 });
    const sem = waiterClient.semaphore('handoff', { permits: 3 });
    const waiting = [1, 2, 3].map(() => sem.acquire({ waitMs: 25_000 }));
    await waitFor(async () => (await redis.llen(sem.keys.queue)) === 3);
    const before = await commandStats(redis);
    // Long enough for a polling waiter to show in the counts; the holder's lease has 30 s left.
    await delay(1_000);
    const idle = commandStatsDelta(before, await commandStats(redis));
    expect((idle['evalsha'] ?? 0) + (idle['eval'] ?? 0)).toBe(0);
    await holder.release();
    const leases = await Promise.all(waiting);
    expect(leases.map((l) => l.token).every((t) => t > holder.token)).toBe(true);
    const all = commandStatsDelta(before, await commandStats(redis));
    // The release, and one confirmation per waiter (INFO calls are not scripts).
    expect((all['evalsha'] ?? 0) + (all['eval'] ?? 0)).toBeLessThanOrEqual(1 + 3);
    // Each confirmed in the background to the full lease (30 s by default), not the 2 s claim.
    const [seconds] = await redis.time();
    await waitFor(async () => {
      const scores = (await redis.zrange(sem.keys.expiry, '0', '-1', 'WITHSCORES')).filter((_, i) => i % 2 === 1).map(Number);
      return scores.length === 3 && scores.every((score) => score > Number(seconds) * 1000 + 10_000);
    });
    await Promise.all(leases.map((l) => l.release()));
    expect(await sem.availablePermits()).toBe(3);
  });

  it('a client given another count gets PermitCountMismatchError until setPermits()', async () => {
    const a = await fx.client();
    const b = await fx.client();
    const four = a.semaphore('mismatch', { permits: 4 });
    const lease = await four.acquire();
    const three = b.semaphore('mismatch', { permits: 3 });
    const error = await three.acquire().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PermitCountMismatchError);
    expect(error).toMatchObject({ code: 'ERR_PERMIT_COUNT_MISMATCH', expected: 3, stored: 4 });
    await expect(three.tryAcquire()).rejects.toBeInstanceOf(PermitCountMismatchError);
    await expect(three.availablePermits()).rejects.toBeInstanceOf(PermitCountMismatchError);
    expect(await three.setPermits(3)).toBe(4);
    expect(three.permits).toBe(3);
    expect(await three.availablePermits()).toBe(2);
    await expect(four.acquire()).rejects.toBeInstanceOf(PermitCountMismatchError);
    // The lease taken under the old count is still held and released normally.
    await lease.release();
    expect(await three.availablePermits()).toBe(3);
  });

  it('raising the count hands permits to waiters at once; lowering it takes none back', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('resize', { permits: 1 });
    const first = await sem.acquire({ leaseMs: 30_000 });
    const waiting = sem.acquire({ waitMs: 20_000 });
    await waitFor(async () => (await (await fx.redis()).llen(sem.keys.queue)) === 1);
    await sem.setPermits(2);
    const second = await waiting;
    expect(await sem.availablePermits()).toBe(0);
    await sem.setPermits(1);
    expect(first.isHeld && second.isHeld).toBe(true);
    // The count less the permits held, as documented: one permit must come back before anyone is admitted.
    expect(await sem.availablePermits()).toBe(-1);
    await first.release();
    expect(await sem.availablePermits()).toBe(0);
    await second.release();
    expect(await sem.availablePermits()).toBe(1);
  });

  it('a wait that times out leaves the queue and holds nobody back', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('timeout', { permits: 2 });
    const holder = await sem.acquire({ permits: 1, leaseMs: 30_000 });
    await expect(sem.acquire({ permits: 2, waitMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    const redis = await fx.redis();
    expect(await redis.llen(sem.keys.queue)).toBe(0);
    const next = await sem.tryAcquire();
    expect(next).not.toBeNull();
    await next!.release();
    await holder.release();
  });

  it('withLock releases afterwards, and validates its input', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('with', { permits: 2 });
    const seen = await sem.withLock(async (lease) => {
      expect(await sem.availablePermits()).toBe(1);
      return lease.permits;
    }, { permits: 1 });
    expect(seen).toBe(1);
    expect(await sem.availablePermits()).toBe(2);
    await expect(sem.withLock(() => { throw new Error('boom'); })).rejects.toThrow('boom');
    expect(await sem.availablePermits()).toBe(2);
    for (const bad of [0, -1, 1.5, 3, '1', Number.NaN]) {
      await expect(sem.acquire({ permits: bad as number })).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(sem.tryAcquire({ permits: bad as number })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(() => locks.semaphore('bad', { permits: 0 })).toThrow(InvalidArgumentError);
    expect(() => locks.semaphore('bad', undefined as never)).toThrow(InvalidArgumentError);
    expect(() => locks.semaphore('', { permits: 1 })).toThrow(InvalidArgumentError);
    await expect(sem.withLock(undefined as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sem.setPermits(0)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('emits typed events that say which kind and name', async () => {
    const locks = await fx.client();
    const events: (AcquiredEvent | ReleasedEvent | LostEvent | { extended: string })[] = [];
    locks.on('acquired', (e) => events.push(e));
    locks.on('released', (e) => events.push(e));
    locks.on('extended', (e) => events.push({ extended: `${e.kind}:${e.name}` }));
    const sem = locks.semaphore('events', { permits: 2 });
    const lease = await sem.acquire({ permits: 2 });
    await lease.extend(10_000);
    expect(lease.leaseMs).toBe(10_000);
    await lease.release();
    const plain = await locks.lock('events').acquire();
    await plain.release();
    expect(events).toMatchObject([
      { kind: 'semaphore', name: 'events', token: lease.token, permits: 2, reentrant: false },
      { extended: 'semaphore:events' },
      { kind: 'semaphore', name: 'events', token: lease.token, holdCount: 0 },
      { name: 'events' },
      { name: 'events', holdCount: 0 },
    ]);
    // The mutex's payloads carry no kind.
    expect(events[3]).not.toHaveProperty('kind');
    expect(events[4]).not.toHaveProperty('kind');
  });

  it('a lease whose holder entry is removed is lost: extend rejects and the signal aborts', async () => {
    const locks = await fx.client();
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const sem = locks.semaphore('removed', { permits: 1 });
    const lease = await sem.acquire();
    const redis = await fx.redis();
    await redis.del(sem.keys.lock, sem.keys.expiry);
    await expect(lease.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost).toMatchObject([{ kind: 'semaphore', name: 'removed', reason: 'deleted' }]);
    await expect(lease.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
  });

  it('a lease runs out by its deadline before the server expires it', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('deadline', { permits: 1 });
    const lease = await sem.acquire({ leaseMs: 300 });
    await waitFor(() => lease.signal.aborted, { timeoutMs: 10_000 });
    expect(lease.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST', reason: 'expired' });
    await waitFor(async () => (await sem.availablePermits()) === 1, { timeoutMs: 10_000 });
  });

  it('asyncDispose releases, and close() ends every lease', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('dispose', { permits: 2 });
    const lease = await sem.acquire();
    await lease[Symbol.asyncDispose]();
    expect(lease.isHeld).toBe(false);
    await lease[Symbol.asyncDispose]();
    expect(await sem.availablePermits()).toBe(2);

    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const held = await sem.acquire();
    // Settled as soon as it rejects: it may, while close() still releases `held` (the permits
    // freed are offered to it first), before this test awaits it.
    const waiting = sem.acquire({ permits: 2 }).catch((error: unknown) => error);
    await waitFor(async () => (await (await fx.redis()).llen(sem.keys.queue)) === 1);
    await locks.close({ release: true });
    expect(await waiting).toBeInstanceOf(ClientClosedError);
    expect(held.signal.reason).toBeInstanceOf(ClientClosedError);
    expect(lost).toMatchObject([{ kind: 'semaphore', name: 'dispose', reason: 'closed' }]);
    const other = await fx.client();
    expect(await other.semaphore('dispose', { permits: 2 }).availablePermits()).toBe(2);
    expect(() => locks.semaphore('dispose', { permits: 2 })).toThrow(ClientClosedError);
  });

  it('is not reentrant: an acquisition inside withLock is a lease of its own', async () => {
    const locks = await fx.client();
    const sem = locks.semaphore('not-reentrant', { permits: 2 });
    await sem.withLock(async (outer) => {
      const inner = await sem.acquire();
      expect(inner.token).toBeGreaterThan(outer.token);
      expect(await sem.availablePermits()).toBe(0);
      expect(await sem.tryAcquire()).toBeNull();
      await inner.release();
    });
  });

  it('a semaphore and a lock of the same name are independent', async () => {
    const locks = await fx.client();
    const lock = await locks.lock('same-name').acquire();
    const lease = await locks.semaphore('same-name', { permits: 1 }).acquire();
    expect(lease.isHeld && lock.isHeld).toBe(true);
    await locks.lock('same-name').forceRelease();
    expect(lease.isHeld).toBe(true);
    await lease.release();
  });
});
