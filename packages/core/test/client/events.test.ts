import { LockLostError } from '@holdfast/core';
import type { AcquiredEvent, ExtendedEvent, LostEvent, ReleasedEvent } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

describe('lifecycle events', () => {
  const fx = useRedis();

  it('acquired, extended and released carry name, token and hold counts', async () => {
    const locks = await fx.client();
    const acquired: AcquiredEvent[] = [];
    const released: ReleasedEvent[] = [];
    const extended: ExtendedEvent[] = [];
    locks.on('acquired', (e) => acquired.push(e));
    locks.on('released', (e) => released.push(e));
    locks.on('extended', (e) => extended.push(e));
    const lock = locks.lock('ev');
    await lock.withLock(async (lease) => {
      await lock.withLock(() => undefined);
      await lease.extend(10_000);
    });
    expect(acquired.map((e) => [e.name, e.holdCount, e.reentrant])).toEqual([
      ['ev', 1, false],
      ['ev', 2, true],
    ]);
    expect(acquired[0]!.waitedMs).toBeGreaterThanOrEqual(0);
    expect(released.map((e) => e.holdCount)).toEqual([1, 0]);
    expect(extended).toEqual([{ name: 'ev', token: acquired[0]!.token, leaseMs: 10_000 }]);
    expect(new Set([...acquired, ...released].map((e) => e.token)).size).toBe(1);
  });

  it('each payload holds exactly its documented fields, for a listener added at any time', async () => {
    const locks = await fx.client();
    // Acquired and released with nobody listening first: nothing is kept from that.
    await locks.lock('exact').withLock(() => undefined);
    const events: [string, Record<string, unknown>][] = [];
    for (const event of ['acquired', 'released', 'extended', 'lost'] as const) {
      locks.on(event, (payload: object) => events.push([event, { ...payload }]));
    }
    const lease = await locks.lock('exact').acquire();
    await lease.extend(10_000);
    await lease.release();
    const doc = locks.readWriteLock('exact-rw');
    await (await doc.read.acquire()).release();
    const multi = await locks.multiLock(['exact-a', 'exact-b']).acquire();
    await multi.release();
    const permits = await locks.semaphore('exact-sem', { permits: 3 }).acquire({ permits: 2 });
    await permits.release();
    const token = (name: string) => events.find(([event, p]) => event === 'acquired' && p.name === name)![1].token;
    const waited = (name: string) => events.find(([event, p]) => event === 'acquired' && p.name === name)![1].waitedMs;
    // A multi-lock's parts may be acquired and released in any order.
    const multiNames = ['exact-a', 'exact-b'];
    const isMulti = ([, p]: [string, Record<string, unknown>]) => multiNames.includes(p.name as string);
    const byName = (a: [string, Record<string, unknown>], b: [string, Record<string, unknown>]) =>
      `${a[0]}:${String(a[1].name)}`.localeCompare(`${b[0]}:${String(b[1].name)}`);
    expect(events.filter((e) => !isMulti(e))).toStrictEqual([
      ['acquired', { name: 'exact', token: token('exact'), holdCount: 1, waitedMs: waited('exact'), reentrant: false }],
      ['extended', { name: 'exact', token: token('exact'), leaseMs: 10_000 }],
      ['released', { name: 'exact', token: token('exact'), holdCount: 0 }],
      ['acquired', { name: 'exact-rw', token: token('exact-rw'), holdCount: 1, waitedMs: waited('exact-rw'), reentrant: false, kind: 'read' }],
      ['released', { name: 'exact-rw', token: token('exact-rw'), holdCount: 0, kind: 'read' }],
      [
        'acquired',
        { name: 'exact-sem', token: token('exact-sem'), holdCount: 1, waitedMs: waited('exact-sem'), reentrant: false, kind: 'semaphore', permits: 2 },
      ],
      ['released', { name: 'exact-sem', token: token('exact-sem'), holdCount: 0, kind: 'semaphore' }],
    ]);
    expect(events.filter(isMulti).sort(byName)).toStrictEqual([
      ...multiNames.map((name) => ['acquired', { name, token: token(name), holdCount: 1, waitedMs: waited(name), reentrant: false, multiLock: multiNames }]),
      ...multiNames.map((name) => ['released', { name, token: token(name), holdCount: 0, multiLock: multiNames }]),
    ]);
    for (const [, payload] of events) expect(typeof payload.token).toBe('number');
  });

  it('a lease that runs out aborts its signal and emits lost once', async () => {
    const locks = await fx.client();
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const lease = await locks.lock('expire').acquire({ leaseMs: 150 });
    expect(lease.signal.aborted).toBe(false);
    await delay(400);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ name: 'expire', token: lease.token, reason: 'expired' });
    expect(lease.isHeld).toBe(false);
    await expect(lease.extend()).rejects.toBeInstanceOf(LockLostError);
    await expect(lease.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
  });

  it('a signal first read after the loss is already aborted', async () => {
    const locks = await fx.client();
    locks.on('lost', () => undefined);
    const lease = await locks.lock('late-signal').acquire({ leaseMs: 100 });
    await delay(250);
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
  });

  it('lost fires before the server expires the key', async () => {
    // One connection for the lock and the probe: the probe is sent from the
    // listener, before the release that follows the loss. A wide margin
    // (driftFactor 0.25: 502 ms) keeps a busy machine's timer lateness out of it.
    const redis = await fx.redis();
    const locks = await fx.client({ driftFactor: 0.25 }, redis);
    let pttlAtLoss = -1;
    const seen = new Promise<void>((resolve, reject) => {
      locks.on('lost', () => {
        // A failed read fails the test through `seen`, never as an unhandled rejection.
        redis.pttl(locks.lock('before-expiry').keys.lock).then((p) => {
          pttlAtLoss = p;
          resolve();
        }, reject);
      });
    });
    await locks.lock('before-expiry').acquire({ leaseMs: 2_000 });
    await seen;
    expect(pttlAtLoss).toBeGreaterThan(0);
  });

  it('withLock rejects with LockLostError when the lease was lost during the callback', async () => {
    const locks = await fx.client();
    locks.on('lost', () => undefined);
    const result = locks.lock('lost-in-callback').withLock(async (lease) => {
      await delay(300);
      return lease.signal.aborted;
    }, { leaseMs: 100 });
    await expect(result).rejects.toBeInstanceOf(LockLostError);
  });

  it('a throwing listener breaks neither the lock nor the other listeners', async () => {
    const locks = await fx.client();
    const errors: unknown[] = [];
    const calls: string[] = [];
    locks.on('acquired', () => {
      throw new Error('listener bug');
    });
    locks.on('acquired', () => calls.push('second'));
    locks.on('error', (e) => errors.push(e));
    locks.on('error', () => {
      throw new Error('error listener bug');
    });
    const lease = await locks.lock('throwing').acquire();
    await lease.release();
    expect(calls).toEqual(['second']);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('listener bug');
  });

  it('forceRelease frees the lock, reports local leases lost and wakes a waiter', async () => {
    const a = await fx.client();
    const b = await fx.client();
    const lost: LostEvent[] = [];
    a.on('lost', (e) => lost.push(e));
    const lease = await a.lock('force').acquire();
    const waiting = b.lock('force').acquire({ waitMs: 5_000 });
    await delay(50);
    expect(await a.lock('force').forceRelease()).toBe(true);
    expect(lost.map((e) => e.reason)).toEqual(['deleted']);
    expect(lease.signal.aborted).toBe(true);
    const got = await waiting;
    expect(got.token).toBeGreaterThan(lease.token);
    await got.release();
    expect(await a.lock('force').forceRelease()).toBe(false);
  });

  it('asyncDispose releases, and is silent when already released', async () => {
    const locks = await fx.client();
    const lease = await locks.lock('dispose').acquire();
    await lease[Symbol.asyncDispose]();
    expect(await locks.lock('dispose').isLocked()).toBe(false);
    await expect(lease[Symbol.asyncDispose]()).resolves.toBeUndefined();
    await expect(lease.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
  });

  it('inspection: isLocked, remainingTtlMs, currentToken', async () => {
    const locks = await fx.client();
    const lock = locks.lock('inspect');
    expect(await lock.isLocked()).toBe(false);
    expect(await lock.remainingTtlMs()).toBe(0);
    expect(await lock.currentToken()).toBeNull();
    const lease = await lock.acquire({ leaseMs: 5_000 });
    expect(await lock.isLocked()).toBe(true);
    const ttl = await lock.remainingTtlMs();
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
    expect(await lock.currentToken()).toBe(lease.token);
    await lease.release();
  });
});

describe('withLock edge cases', () => {
  const fx = useRedis();

  it('a callback that releases its own lease does not make withLock fail', async () => {
    const locks = await fx.client();
    const result = await locks.lock('self-release').withLock(async (lease) => {
      await lease.release();
      return 'done';
    });
    expect(result).toBe('done');
    expect(await locks.lock('self-release').isLocked()).toBe(false);
  });

  it('a callback that throws releases the lock and rethrows its own error', async () => {
    const locks = await fx.client();
    const boom = new Error('boom');
    await expect(locks.lock('throws').withLock(() => Promise.reject(boom))).rejects.toBe(boom);
    expect(await locks.lock('throws').isLocked()).toBe(false);
  });
});
