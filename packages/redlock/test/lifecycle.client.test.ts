import { ClientClosedError, InvalidArgumentError, LockLostError, LockNotHeldError } from '@holdfast/core';
import { Redlock, type RedlockAcquiredEvent } from '@holdfast/redlock';
import { uniqueName, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, expectCounts, useServers } from './helpers.js';

describe('construction and options', () => {
  const fx = useServers(2);

  it('needs at least one ioredis client, each counted once', () => {
    const [a, b] = fx.clients();
    expect(() => new Redlock([])).toThrow(
      'Expected `instances` to be a non-empty array of ioredis or node-redis clients, got `an array of 0`',
    );
    expect(() => new Redlock(undefined as never)).toThrow(InvalidArgumentError);
    expect(() => new Redlock([a!, {} as never])).toThrow(
      'Expected `instances[1]` to be an ioredis or node-redis client, got `object`',
    );
    expect(() => new Redlock([a!, a!])).toThrow(/distinct clients/);
    expect(() => new Redlock([a!, fx.servers[0]!.client()])).toThrow(/distinct servers/);
    expect(new Redlock([a!, b!]).quorum).toBe(2);
  });

  it('validates options with the same wording as core', () => {
    const clients = fx.clients();
    expect(() => new Redlock(clients, { leaseMs: -5 })).toThrow(
      'Expected `leaseMs` to be a positive integer, got `-5`',
    );
    expect(() => new Redlock(clients, { instanceTimeoutMs: 0 })).toThrow(
      'Expected `instanceTimeoutMs` to be a positive integer, got `0`',
    );
    expect(() => new Redlock(clients, { driftFactor: 2 })).toThrow(
      'Expected `driftFactor` to be a number from 0 to 0.5, got `2`',
    );
    expect(() => new Redlock(clients, { prefix: 'a{b}' })).toThrow(InvalidArgumentError);
    expect(() => new Redlock(clients, { retries: -1 })).toThrow(InvalidArgumentError);
    expect(() => new Redlock(clients, { leaseMs: 40, instanceTimeoutMs: 50 })).toThrow(
      'Expected `leaseMs` to be greater than `instanceTimeoutMs` (50), got `40`',
    );
    const redlock = new Redlock(clients);
    expect(redlock.options).toEqual({
      prefix: 'holdfast',
      leaseMs: 30_000,
      driftFactor: 0.01,
      instanceTimeoutMs: 50,
      retryDelayMs: 100,
      retries: 3,
      commandTimeoutMs: 5_000,
      subscriptionLingerMs: 10_000,
      evictionCheck: 'refuse',
    });
    expect(() => redlock.lock('')).toThrow(InvalidArgumentError);
  });

  it('validates per-call options', async () => {
    const lock = fx.redlock().lock(uniqueName('options'));
    await expect(lock.acquire({ leaseMs: 100 })).rejects.toThrow(/greater than `instanceTimeoutMs`/);
    await expect(lock.acquire({ waitMs: -1 })).rejects.toThrow('Expected `waitMs` to be a positive integer, got `-1`');
    await expect(lock.withLock(42 as never)).rejects.toThrow(InvalidArgumentError);
  });
});

describe('events, loss and close', () => {
  const fx = useServers(3);

  it('emits core’s lifecycle events, with validityMs on acquired', async () => {
    const redlock = fx.redlock();
    const events: [string, unknown][] = [];
    for (const name of ['acquired', 'released', 'extended', 'lost'] as const) {
      redlock.on(name, (e: unknown) => events.push([name, e]));
    }
    const name = uniqueName('events');
    await redlock.lock(name).withLock(async (lease) => {
      await lease.extend(20_000);
      await redlock.lock(name).withLock(() => undefined);
    });
    expect(events.map(([kind]) => kind)).toEqual(['acquired', 'extended', 'acquired', 'released', 'released']);
    const [first, , second] = events.map(([, e]) => e) as RedlockAcquiredEvent[];
    expect(first).toMatchObject({ name, holdCount: 1, reentrant: false });
    expect(first!.validityMs).toBeGreaterThan(0);
    expect(second).toMatchObject({ name, holdCount: 2, reentrant: true, token: first!.token });
    expect(events[1]![1]).toEqual({ name, token: first!.token, leaseMs: 20_000 });
    expect(events[4]![1]).toEqual({ name, token: first!.token, holdCount: 0 });
  });

  it('a listener that throws breaks nothing: its error goes to `error`', async () => {
    const redlock = fx.redlock();
    const errors: unknown[] = [];
    redlock.on('error', (e) => errors.push(e));
    redlock.on('acquired', () => {
      throw new Error('listener bug');
    });
    const lease = await redlock.lock(uniqueName('throwing')).acquire();
    await lease.release();
    expect(errors.map((e) => (e as Error).message)).toContain('listener bug');
  });

  it('a lease nobody extends is reported lost when its validity ends', async () => {
    const redlock = fx.redlock();
    const lost: string[] = [];
    redlock.on('lost', (e) => lost.push(e.reason));
    const lease = await redlock.lock(uniqueName('expire')).acquire({ leaseMs: 1_000 });
    expect(lease.validityMs).toBeLessThanOrEqual(1_000 - 12);
    await waitFor(() => lease.signal.aborted, { timeoutMs: 5_000 });
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
    expect(lost).toEqual(['expired']);
    expect(lease.isHeld).toBe(false);
    await expect(lease.release()).rejects.toBeInstanceOf(LockNotHeldError);
  });

  it('withLock rejects with LockLostError when the lease was lost during fn', async () => {
    const redlock = fx.redlock();
    const lock = redlock.lock(uniqueName('lost-during'));
    await expect(lock.withLock(() => delay(1_500), { leaseMs: 600 })).rejects.toBeInstanceOf(LockLostError);
  });

  it('close() rejects waiters, keeps held leases to their TTL and the clients open', async () => {
    const clients = fx.clients();
    const holder = fx.redlock({}, clients);
    const name = uniqueName('close');
    const lease = await holder.lock(name).acquire({ leaseMs: 10_000 });
    const waiter = fx.redlock({}, clients);
    const waiting = waiter.lock(name).acquire();
    // It rejects during close(), before its assertion: a handler at once keeps it from being reported unhandled.
    waiting.catch(() => undefined);
    await delay(100);
    await waiter.close();
    await expect(waiting).rejects.toBeInstanceOf(ClientClosedError);
    expect(() => waiter.lock(name)).toThrow(ClientClosedError);
    await holder.close();
    expect(lease.isHeld).toBe(false);
    expect(await Promise.all(clients.map((c) => c.ping()))).toEqual(['PONG', 'PONG', 'PONG']);
    const probe = fx.redlock({}, clients);
    expect(await probe.lock(name).isLocked()).toBe(true);
  });

  it('close({ release: true }) releases every held lease', async () => {
    const redlock = fx.redlock();
    const a = await redlock.lock(uniqueName('r1')).acquire();
    const b = await redlock.lock(uniqueName('r2')).acquire();
    expect(redlock.heldCount).toBe(2);
    await redlock.close({ release: true });
    expect(a.isHeld).toBe(false);
    await expectCounts(fx, fx.redlock().lock(a.name).keys.lock, [null, null, null]);
    await expectCounts(fx, fx.redlock().lock(b.name).keys.lock, [null, null, null]);
  });

  it('leaves no active handle behind once the user clients are closed too', async () => {
    const handles = () => process.getActiveResourcesInfo().filter((r) => r !== 'FSReqCallback');
    const before = handles().length;
    const clients = fx.clients();
    const holder = new Redlock(clients, { prefix: fx.prefix, subscriptionLingerMs: 60_000 });
    const waiter = new Redlock(clients, { prefix: fx.prefix });
    const name = uniqueName('handles');
    const lease = await holder.lock(name).acquire({ leaseMs: 10_000 });
    const waiting = waiter.lock(name).acquire({ waitMs: 5_000 });
    await delay(100);
    await lease.release();
    await (await waiting).release();
    await holder.close();
    await waiter.close();
    for (const c of clients) c.disconnect();
    await delay(200);
    expect(handles().length).toBeLessThanOrEqual(before);
  });
});
