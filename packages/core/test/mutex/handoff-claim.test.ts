import { blockEventLoop } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * A waiter handed the lock starts on the hand-off message, before its
 * confirmation has extended the short claim to its full lease. The claim must
 * be dated from the hand-off itself: dated from the waiter's last queued
 * attempt (which may be most of a claim earlier), the waiter started with a
 * few ms left, its deadline passed while its section ran, and the lock went
 * to the next waiter in the middle of that section.
 */
describe('a waiter handed the lock keeps it for its whole lease', () => {
  const fx = useRedis();

  it('queued for most of a claim, then handed the lock: its section is not cut short by the claim (3 of 3)', async () => {
    const redis = await fx.redis();
    const locks = await fx.client({ handoffTimeoutMs: 1_000 }, redis);
    const holders = await fx.client({ handoffTimeoutMs: 1_000 });
    const rivals = await fx.client({ handoffTimeoutMs: 1_000 });
    const lost: string[] = [];
    locks.on('lost', ({ reason }) => lost.push(reason));
    for (let round = 0; round < 3; round++) {
      const lock = locks.lock(`claim-${round}`);
      const holder = await holders.lock(`claim-${round}`).acquire({ leaseMs: 30_000 });
      const order: string[] = [];
      const seen: { heldAfter?: boolean; abortedAfter?: boolean } = {};
      const waiter = lock.withLock(
        async (lease) => {
          order.push('b in');
          blockEventLoop(60);
          await delay(60);
          seen.heldAfter = lease.isHeld;
          seen.abortedAfter = lease.signal.aborted;
          order.push('b out');
        },
        { waitMs: 30_000 },
      );
      // Wait until the waiter's queued attempt is in, then hold on for most of a claim.
      while ((await redis.llen(lock.keys.queue)) === 0) await delay(1);
      const queuedAt = performance.now();
      // A second waiter, queued behind the first, must not get in during its section.
      const third = (async () => {
        const lease = await rivals.lock(`claim-${round}`).acquire({ waitMs: 30_000 });
        order.push('c in');
        await lease.release();
      })();
      while ((await redis.llen(lock.keys.queue)) < 2) await delay(1);
      await delay(Math.max(0, 960 - (performance.now() - queuedAt)));
      await holder.release();
      await waiter;
      await third;
      expect(seen).toEqual({ heldAfter: true, abortedAfter: false });
      expect(order).toEqual(['b in', 'b out', 'c in']);
    }
    expect(lost).toEqual([]);
  });
});

describe('dating a hand-off from server times', () => {
  it('counts the claim from the hand-off, not from the queued attempt, within what the local clock allows', async () => {
    const { handoffStart } = await import('../../src/engine/acquire-loop.js');
    // Queued at local 1000 (server 50_000); handed over 900 server ms later, read at local 2000.
    expect(handoffStart(1_000, 50_000, 50_900, 2_000)).toBe(1_900);
    // A server clock that jumped forward cannot date it later than now.
    expect(handoffStart(1_000, 50_000, 90_000, 2_000)).toBe(2_000);
    // Backwards, or no server times (an older script): from the attempt.
    expect(handoffStart(1_000, 50_000, 49_000, 2_000)).toBe(1_000);
    expect(handoffStart(1_000, undefined, 50_900, 2_000)).toBe(1_000);
  });

  it('a hand-off announced before the last queued attempt ran is stale (read after a pause)', async () => {
    const { isStale } = await import('../../src/engine/acquire-loop.js');
    expect(isStale(49_999, 50_000)).toBe(true);
    expect(isStale(50_000, 50_000)).toBe(false);
    expect(isStale(50_001, 50_000)).toBe(false);
    expect(isStale(undefined, 50_000)).toBe(false);
    expect(isStale(50_000, undefined)).toBe(false);
  });
});
