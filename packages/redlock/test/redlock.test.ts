import { LockTimeoutError } from '@holdfast/core';
import { QuorumError, type RedlockLease } from '@holdfast/redlock';
import { uniqueName, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, expectCounts, useServers } from './helpers.js';

describe.each([3, 5])('Redlock over %i instances', (n) => {
  const fx = useServers(n);

  it('acquires on every instance, excludes others, and releases everywhere', async () => {
    const redlock = fx.redlock();
    expect(redlock.quorum).toBe(Math.floor(n / 2) + 1);
    const lock = redlock.lock(uniqueName('basic'));
    const lease = await lock.acquire({ leaseMs: 10_000 });
    expect(lease.token).toBeGreaterThan(0);
    expect(lease.holdCount).toBe(1);
    expect(lease.isHeld).toBe(true);
    expect(lease.validityMs).toBeGreaterThan(10_000 - 102 - 1_000);
    expect(lease.validityMs).toBeLessThanOrEqual(10_000 - 102);
    expect(lease.signal.aborted).toBe(false);
    await expectCounts(fx, lock.keys.lock, Array(n).fill('1'));

    const other = fx.redlock();
    expect(await other.lock(lock.name).tryAcquire()).toBeNull();
    expect(await other.lock(lock.name).isLocked()).toBe(true);
    expect(await other.lock(lock.name).currentToken()).toBe(lease.token);
    const ttl = await other.lock(lock.name).remainingTtlMs();
    expect(ttl).toBeGreaterThan(5_000);
    expect(ttl).toBeLessThanOrEqual(10_000);

    await lease.release();
    expect(lease.isHeld).toBe(false);
    await expectCounts(fx, lock.keys.lock, Array(n).fill(null));
    expect(await lock.isLocked()).toBe(false);
    expect(await lock.remainingTtlMs()).toBe(0);
    expect(await lock.currentToken()).toBeNull();
    const next = await other.lock(lock.name).tryAcquire();
    expect(next).not.toBeNull();
    expect(next!.token).toBeGreaterThan(lease.token);
    await next!.release();
  });

  it('re-enters from nested withLock: same token, holdCount 2, counted on every instance', async () => {
    const redlock = fx.redlock();
    const lock = redlock.lock(uniqueName('nested'));
    const seen: { token: number; holdCount: number }[] = [];
    const result = await lock.withLock(async (outer) => {
      seen.push({ token: outer.token, holdCount: outer.holdCount });
      await expectCounts(fx, lock.keys.lock, Array(n).fill('1'));
      await lock.withLock(async (inner) => {
        seen.push({ token: inner.token, holdCount: inner.holdCount });
        await expectCounts(fx, lock.keys.lock, Array(n).fill('2'));
        expect(inner.validityMs).toBeGreaterThan(0);
      });
      seen.push({ token: outer.token, holdCount: outer.holdCount });
      await expectCounts(fx, lock.keys.lock, Array(n).fill('1'));
      return 'done';
    });
    expect(result).toBe('done');
    const token = seen[0]!.token;
    expect(seen).toEqual([
      { token, holdCount: 1 },
      { token, holdCount: 2 },
      { token, holdCount: 1 },
    ]);
    await expectCounts(fx, lock.keys.lock, Array(n).fill(null));
    expect(redlock.heldCount).toBe(0);
  });

  it('re-enters with acquire() inside withLock; a second bare acquire() in one chain is a new owner that waits', async () => {
    const redlock = fx.redlock();
    const lock = redlock.lock(uniqueName('chain'));
    await lock.withLock(async (outer) => {
      const inner = await lock.acquire();
      expect(inner.token).toBe(outer.token);
      expect(inner.holdCount).toBe(2);
      await inner.release();
    });
    const lease = await lock.acquire();
    await expect(lock.acquire({ waitMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    await lease.release();
  });

  it('tokens strictly increase across holders and Redlocks', async () => {
    const a = fx.redlock();
    const b = fx.redlock();
    const name = uniqueName('tokens');
    const tokens: number[] = [];
    for (let i = 0; i < 6; i++) {
      const lease = await (i % 2 ? a : b).lock(name).acquire({ waitMs: 5_000 });
      tokens.push(lease.token);
      await lease.release();
    }
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
  });

  it('a release published on the instances wakes a waiter long before the lease or any backoff ends', async () => {
    const holder = fx.redlock();
    // A backoff this long leaves the pub/sub wake-up as the only way in time.
    const waiter = fx.redlock({ retryDelayMs: 10_000 });
    const name = uniqueName('wake');
    const lease = await holder.lock(name).acquire({ leaseMs: 20_000 });
    const waiting = waiter.lock(name).acquire({ waitMs: 15_000 });
    await delay(300);
    const releasedAt = performance.now();
    await lease.release();
    const next = await waiting;
    expect(performance.now() - releasedAt).toBeLessThan(3_000);
    expect(next.token).toBeGreaterThan(lease.token);
    await next.release();
  });

  it('keeps critical sections exclusive under contention from several Redlocks', async () => {
    const clients = [fx.redlock(), fx.redlock(), fx.redlock()];
    const name = uniqueName('contended');
    let inside = 0;
    let overlaps = 0;
    const tokens: number[] = [];
    await Promise.all(
      clients.flatMap((redlock) =>
        Array.from({ length: 4 }, () =>
          redlock.lock(name).withLock(
            async (lease) => {
              inside++;
              if (inside > 1) overlaps++;
              tokens.push(lease.token);
              await delay(10);
              inside--;
            },
            { waitMs: 25_000, leaseMs: 10_000 },
          ),
        ),
      ),
    );
    expect(overlaps).toBe(0);
    expect(tokens).toHaveLength(12);
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]).toBeGreaterThan(tokens[i - 1]!);
  }, 60_000);

  it('extends on a majority', async () => {
    const redlock = fx.redlock();
    const extended: number[] = [];
    redlock.on('extended', (e) => extended.push(e.leaseMs));
    const lock = redlock.lock(uniqueName('extend'));
    const lease = await lock.acquire({ leaseMs: 1_000 });
    await lease.extend(20_000);
    expect(lease.leaseMs).toBe(20_000);
    expect(extended).toEqual([20_000]);
    // extend() returns at a majority; the last instances may apply it a moment later.
    await waitFor(async () => (await fx.pttls(lock.keys.lock)).every((ttl) => ttl > 15_000));
    await lease.release();
  });

  it('a wait that runs out on a held lock is LockTimeoutError, caused by a busy QuorumError', async () => {
    // Every instance has all the time it could need to answer: which ones answer within a short
    // instanceTimeoutMs depends on the machine's load (one missed it and the round counted 4
    // busy + 1 timed out, or 3 timed out and the round was 'unreachable').
    const patient = { instanceTimeoutMs: 10_000 };
    const holder = fx.redlock(patient);
    const name = uniqueName('busy');
    const lease = await holder.lock(name).acquire({ leaseMs: 60_000 });
    // acquire() returns at a majority: until the others have the lease too, a waiter can be
    // granted there (a split round) instead of seeing the lock busy on every instance.
    await expectCounts(fx, holder.lock(name).keys.lock, Array(n).fill('1'));
    const started = performance.now();
    const error = await fx
      .redlock(patient)
      .lock(name)
      .acquire({ waitMs: 300 })
      .catch((e: unknown) => e);
    // The wait ran its whole length, and ended long before the holder's lease could have.
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    expect(lease.isHeld).toBe(true);
    expect(error).toBeInstanceOf(LockTimeoutError);
    const cause = (error as LockTimeoutError).cause;
    expect(cause).toBeInstanceOf(QuorumError);
    const quorumError = cause as QuorumError;
    expect(quorumError.reason).toBe('busy');
    expect(quorumError.outcomes).toHaveLength(n);
    // Decided as soon as a majority was out of reach: the rest may still be pending.
    expect(quorumError.count('busy')).toBeGreaterThanOrEqual(n - quorumError.quorum + 1);
    expect(quorumError.count('busy') + quorumError.count('pending')).toBe(n);
    for (const outcome of quorumError.outcomes) {
      // Seen while the holder's 60 s lease still had most of its time left.
      if (outcome.status === 'busy') expect(outcome.pttl).toBeGreaterThan(30_000);
    }
    await lease.release();
  });

  it('forceRelease frees the lock on every instance and reports the holder lost', async () => {
    const redlock = fx.redlock();
    const lost: string[] = [];
    redlock.on('lost', (e) => lost.push(e.reason));
    const lock = redlock.lock(uniqueName('force'));
    const lease: RedlockLease = await lock.acquire();
    expect(await lock.forceRelease()).toBe(true);
    expect(lost).toEqual(['deleted']);
    expect(lease.signal.aborted).toBe(true);
    expect(await fx.hashes(lock.keys.lock)).toEqual(Array(n).fill(null));
    expect(await lock.forceRelease()).toBe(false);
  });
});
