import { LockLostError, LockTimeoutError, isHoldfastError } from '@holdfast/core';
import { QuorumError } from '@holdfast/redlock';
import { uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { delay, expectCounts, trackUnhandled, useServers } from '../helpers.js';

/**
 * The scenarios of redis-semaphore's RedlockMutex suites (RedlockMutex.test.ts,
 * redlockMutex/acquire, redlockMutex/refresh) over three real redis-server
 * processes. Their refresh timer is `lease.extend()` here; their onLockLost
 * callback is the `lost` event.
 */
describe('ports of redis-semaphore RedlockMutex', () => {
  const fx = useServers(3);
  const unhandled = trackUnhandled();
  afterEach(() => expect(unhandled).toEqual([]));

  /** Runs `command` on one instance through a short-lived admin client. */
  async function on<T>(server: RedisServer, command: (redis: ReturnType<RedisServer['client']>) => Promise<T>): Promise<T> {
    const admin = server.client({ maxRetriesPerRequest: 1 });
    try {
      return await command(admin);
    } finally {
      admin.disconnect();
    }
  }

  it('acquires on every instance and releases everywhere (should acquire and release lock)', async () => {
    const lock = fx.redlock().lock(uniqueName('basic'));
    const lease = await lock.acquire();
    expect(lease.isHeld).toBe(true);
    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    await lease.release();
    expect(lease.isHeld).toBe(false);
    await expectCounts(fx, lock.keys.lock, [null, null, null]);
  });

  it('a second Redlock times out while the lock is held (should reject after timeout)', async () => {
    const name = uniqueName('timeout');
    const lease = await fx.redlock().lock(name).acquire({ leaseMs: 5_000 });
    await expect(fx.redlock().lock(name).acquire({ waitMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    await lease.release();
    await expectCounts(fx, fx.redlock().lock(name).keys.lock, [null, null, null]);
  });

  it('an aborted signal ends the wait with its reason (The operation was aborted due to timeout)', async () => {
    const name = uniqueName('abort');
    const lease = await fx.redlock().lock(name).acquire({ leaseMs: 5_000 });
    const signal = AbortSignal.timeout(10);
    const error = await fx.redlock().lock(name).acquire({ signal }).catch((e: unknown) => e);
    expect(error).toBe(signal.reason);
    await lease.release();
  });

  it('the key carries at most the lease as its TTL on each instance (should set TTL for key)', async () => {
    const lock = fx.redlock().lock(uniqueName('ttl'));
    const lease = await lock.acquire({ leaseMs: 1_000 });
    for (const pttl of await fx.pttls(lock.keys.lock)) {
      if (pttl === -2) continue; // an instance the majority did without
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(1_000);
    }
    await lease.release();
  });

  it('extensions keep the lock on every instance past its first lease (should refresh lock every refreshInterval ms until release)', async () => {
    const lock = fx.redlock().lock(uniqueName('refresh'));
    const lease = await lock.acquire({ leaseMs: 1_000 });
    for (let i = 0; i < 5; i++) {
      await delay(250);
      await lease.extend();
    }
    expect(lease.isHeld).toBe(true);
    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    await lease.release();
    await expectCounts(fx, lock.keys.lock, [null, null, null]);
  });

  it('without extension the lease is reported lost and the keys expire everywhere (should stop refreshing if stopped)', async () => {
    const redlock = fx.redlock();
    const lost: string[] = [];
    redlock.on('lost', (e) => lost.push(e.reason));
    const lock = redlock.lock(uniqueName('no-refresh'));
    const lease = await lock.acquire({ leaseMs: 300 });
    await waitFor(async () => (await fx.pttls(lock.keys.lock)).every((t) => t === -2), { timeoutMs: 5_000 });
    expect(lease.isHeld).toBe(false);
    expect(lost).toEqual(['expired']);
  });

  it('foreign data over the lock on every instance: extend fails, lost reported, the data untouched (lost lock case)', async () => {
    const redlock = fx.redlock();
    const lost: string[] = [];
    redlock.on('lost', (e) => lost.push(e.reason));
    const lock = redlock.lock(uniqueName('taken'));
    const lease = await lock.acquire({ leaseMs: 5_000 });
    await Promise.all(fx.servers.map((s) => on(s, (r) => r.set(lock.keys.lock, '222'))));
    await expect(lease.extend()).rejects.toBeInstanceOf(LockLostError);
    expect(lease.signal.aborted).toBe(true);
    expect(lost).toHaveLength(1);
    expect(await Promise.all(fx.servers.map((s) => on(s, (r) => r.get(lock.keys.lock))))).toEqual(['222', '222', '222']);
    await Promise.all(fx.servers.map((s) => on(s, (r) => r.del(lock.keys.lock))));
  });

  it('one lock object through three lifecycles (should be reusable)', async () => {
    const lock = fx.redlock().lock(uniqueName('reusable'));
    let last = 0;
    for (let i = 0; i < 3; i++) {
      const lease = await lock.acquire({ leaseMs: 2_000 });
      expect(lease.token).toBeGreaterThan(last);
      last = lease.token;
      await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
      await lease.release();
      await expectCounts(fx, lock.keys.lock, [null, null, null]);
    }
  });

  it('a waiter gets the lock once the unreleased lease expired; other names never wait (should wait for auto-release, should wait per key)', async () => {
    const name = uniqueName('auto-release');
    const first = await fx.redlock().lock(name).acquire({ leaseMs: 300 });
    const other = await fx.redlock().lock(uniqueName('other-key')).tryAcquire();
    expect(other).not.toBeNull();
    const second = await fx.redlock().lock(name).acquire({ leaseMs: 2_000, waitMs: 5_000 });
    expect(first.isHeld).toBe(false);
    expect(second.token).toBeGreaterThan(first.token);
    await Promise.all([second.release(), other!.release()]);
  });

  it('extend succeeds with the key on a majority (and puts it back), fails with it gone from a majority (redlockMutex refresh)', async () => {
    const [a, b] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const lock = fx.redlock().lock(uniqueName('refresh-quorum'));
    const lease = await lock.acquire({ leaseMs: 5_000 });
    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    await on(a, (r) => r.del(lock.keys.lock));
    await lease.extend(20_000);
    expect(lease.isHeld).toBe(true);
    // As redis-semaphore's refresh does, the key comes back where it was gone.
    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    await Promise.all([a, b].map((s) => on(s, (r) => r.del(lock.keys.lock))));
    await expect(lease.extend(20_000)).rejects.toBeInstanceOf(LockLostError);
    expect(lease.isHeld).toBe(false);
  });

  it('a minority down: the holder keeps its lease, rivals are refused before and after it comes back empty ([Node shutdown] quorum alive)', async () => {
    const [a] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const holder = fx.redlock({ instanceTimeoutMs: 100 });
    const name = uniqueName('minority-down');
    const lease = await holder.lock(name).acquire({ leaseMs: 3_000 });
    await a.kill();
    try {
      await lease.extend();
      const rival = fx.redlock({ instanceTimeoutMs: 100 });
      await expect(rival.lock(name).acquire({ waitMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
      await a.restart();
      await expect(rival.lock(name).acquire({ waitMs: 300 })).rejects.toBeInstanceOf(LockTimeoutError);
      // An extension puts the key back on the instance that lost it, its fencing counter raised
      // (one sent while the holder's client was still reconnecting may miss it: extend again).
      const { lock: key, fence } = holder.lock(name).keys;
      await waitFor(
        async () => {
          await lease.extend();
          return (await fx.hashes(key))[0] !== null;
        },
        { timeoutMs: 10_000, intervalMs: 100, message: 'not put back on the restarted instance' },
      );
      expect(lease.isHeld).toBe(true);
      await expectCounts(fx, key, ['1', '1', '1']);
      expect(Number(await on(a, (r) => r.get(fence)))).toBeGreaterThanOrEqual(lease.token);
      await lease.release();
      const next = await rival.lock(name).acquire({ waitMs: 5_000 });
      expect(next.token).toBeGreaterThan(lease.token);
      await next.release();
      // Closed before the restart below: ioredis re-sends the subscriptions of a reconnected
      // subscriber without handling their rejection, which a close() during that would leave unhandled.
      await rival.close();
    } finally {
      await a.restart().catch(() => undefined);
    }
  }, 30_000);

  it('a majority down: the holder cannot extend, is told lost at validity end, nobody acquires ([Node shutdown] quorum dead)', async () => {
    const [a, b] = fx.servers as [RedisServer, RedisServer, RedisServer];
    const holder = fx.redlock({ instanceTimeoutMs: 100, retries: 1, retryDelayMs: 50 });
    const lost: string[] = [];
    holder.on('lost', (e) => lost.push(e.reason));
    const name = uniqueName('majority-down');
    // Long enough that the kills (slow on a loaded machine) end well inside it.
    const lease = await holder.lock(name).acquire({ leaseMs: 3_000 });
    await Promise.all([a.kill(), b.kill()]);
    try {
      const error = await lease.extend().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QuorumError);
      await waitFor(() => !lease.isHeld, { timeoutMs: 10_000 });
      expect(lost).toEqual(['expired']);
      const rival = fx.redlock({ instanceTimeoutMs: 100, retries: 1, retryDelayMs: 50 });
      const refused = await rival.lock(name).acquire({ waitMs: 500 }).catch((e: unknown) => e);
      expect(isHoldfastError(refused)).toBe(true);
      expect(rival.heldCount).toBe(0);
    } finally {
      await Promise.all([a.restart(), b.restart()]);
    }
  }, 30_000);
});
