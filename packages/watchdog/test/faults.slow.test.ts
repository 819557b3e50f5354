import { LockLostError, type LostEvent } from '@holdfast/core';
import { driftMarginMs } from '@holdfast/core/internal';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import type { LeaseLostEvent, RenewalFailedEvent, RenewedEvent, Watchdog } from '@holdfast/watchdog';
import { delay, spyOnRenewals, useWatchdogFixture, type RenewSpy } from './helpers.js';

/**
 * Renewal calls that named `name` and were sent in (from, to): how many ticks a loss took to be
 * found, counted in ticks rather than ms (a loaded machine runs ticks late, never fewer of them).
 */
function renewalsSentBetween(spy: RenewSpy, name: string, from: number, to: number): number {
  return spy.sent.filter((call) => call.at > from && call.at < to && call.names.includes(name)).length;
}

/** Faults on real processes: a stopped, killed or flushed Redis, and a stalled client. */
describe('faults', () => {
  const fx = useWatchdogFixture();

  function record(dog: Watchdog) {
    const seen = {
      order: [] as string[],
      renewed: [] as RenewedEvent[],
      failed: [] as RenewalFailedEvent[],
      lost: [] as (LeaseLostEvent & { at: number })[],
    };
    dog.on('renewed', (event) => {
      seen.renewed.push(event);
      seen.order.push('renewed');
    });
    dog.on('renewalFailed', (event) => {
      seen.failed.push(event);
      seen.order.push('renewalFailed');
    });
    dog.on('lost', (event) => {
      seen.lost.push({ ...event, at: performance.now() });
      seen.order.push(`lost:${event.reason}`);
    });
    return seen;
  }

  it('Redis stopped (SIGSTOP) for 2× timeoutMs: lost as unreachable before the server expiry, never revived', async () => {
    const timeoutMs = 1_000;
    // A wide drift margin keeps the "before the server expiry" check clear of timer jitter.
    const locks = fx.locks({ commandTimeoutMs: 200, driftFactor: 0.2 });
    const dog = fx.watchdog(locks, { timeoutMs });
    const spy = spyOnRenewals(locks);
    const seen = record(dog);
    const admin = fx.redis();

    const lease = await locks.lock('paused').acquire();
    const key = locks.lock('paused').keys.lock;
    await waitFor(() => seen.renewed.length >= 1 && spy.inFlight === 0, { timeoutMs: 3_000 });
    fx.server.pause();
    fx.defer(() => fx.server.resume());
    const pausedAt = performance.now();

    await waitFor(() => seen.lost.length > 0, { timeoutMs: 3_000 });
    const lost = seen.lost[0]!;
    const lastConfirmedStart = seen.renewed.at(-1)!.startedAt;
    const margin = driftMarginMs(timeoutMs, locks.options.driftFactor);
    expect(lost.reason).toBe('unreachable');
    expect(lost.name).toBe('paused');
    // The server's lease runs until at least lastConfirmedStart + timeoutMs.
    expect(lost.at).toBeLessThan(lastConfirmedStart + timeoutMs);
    expect(lost.at).toBeGreaterThanOrEqual(lastConfirmedStart + timeoutMs - margin - 2);
    expect(seen.failed.length).toBeGreaterThanOrEqual(1);
    expect(seen.order.at(-1)).toBe('lost:unreachable');
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(LockLostError);
    expect(lease.isHeld).toBe(false);
    expect(dog.watchedCount).toBe(0);
    console.log(
      `SIGSTOP: lost ${(lastConfirmedStart + timeoutMs - lost.at).toFixed(1)} ms before the earliest server expiry ` +
        `(drift margin ${margin} ms, ${seen.failed.length} failed tick(s) before)`,
    );

    const callsAtLoss = spy.calls;
    await delay(Math.max(0, pausedAt + 2 * timeoutMs - performance.now()));
    fx.server.resume();
    // Renewals queued while the server was stopped now run against an expired key.
    await waitFor(async () => (await admin.exists(key)) === 0, { timeoutMs: 3_000 });
    const rival = fx.rival(locks.options.prefix);
    const taken = await rival.lock('paused').tryAcquire({ leaseMs: 2_000 });
    expect(taken).not.toBeNull();
    await delay(2 * dog.renewIntervalMs);
    expect(spy.calls).toBe(callsAtLoss);
    expect(taken!.isHeld).toBe(true);
    expect(await rival.lock('paused').currentToken()).toBe(taken!.token);
    await taken!.release();
    expect(seen.lost).toHaveLength(1);
  });

  it('a tick hung on a stopped Redis neither delays the loss nor blocks stop() past timeoutMs', async () => {
    const timeoutMs = 1_000;
    // Commands may hang far longer than the lease: only the local deadline can be relied on.
    const locks = fx.locks({ commandTimeoutMs: 10_000, driftFactor: 0.2 });
    const dog = fx.watchdog(locks, { timeoutMs });
    const spy = spyOnRenewals(locks);
    const seen = record(dog);
    let inFlightAtLoss = -1;
    dog.on('lost', () => (inFlightAtLoss = spy.inFlight));

    const lease = await locks.lock('hung').acquire();
    await waitFor(() => seen.renewed.length >= 1 && spy.inFlight === 0, { timeoutMs: 3_000 });
    fx.server.pause();
    fx.defer(() => fx.server.resume());

    await waitFor(() => seen.lost.length > 0, { timeoutMs: 3_000 });
    expect(seen.lost[0]!.reason).toBe('unreachable');
    expect(seen.lost[0]!.at).toBeLessThan(seen.renewed.at(-1)!.startedAt + timeoutMs);
    expect(inFlightAtLoss).toBe(1);
    expect(seen.failed).toEqual([]);
    expect(lease.signal.aborted).toBe(true);

    // Still hung: stop() gives up waiting after timeoutMs.
    const stopAt = performance.now();
    await dog.stop();
    const stopMs = performance.now() - stopAt;
    expect(spy.inFlight).toBe(1);
    expect(stopMs).toBeGreaterThanOrEqual(timeoutMs - 5);
    // It gave up on the hung call (still in flight above) rather than waiting for the call's own
    // command timeout.
    expect(stopMs).toBeLessThan(locks.options.commandTimeoutMs);
    fx.server.resume();
    await waitFor(() => spy.inFlight === 0, { timeoutMs: 3_000 });
    expect(seen.renewed.at(-1)!.startedAt).toBeLessThan(seen.lost[0]!.at);
    expect(seen.lost).toHaveLength(1);
  });

  it('DEL of the held key: lost as deleted within one renewal interval', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 1_200 });
    const spy = spyOnRenewals(locks);
    const seen = record(dog);
    const admin = fx.redis();
    const lock = locks.lock('deleted');
    const lease = await lock.acquire();
    await waitFor(() => seen.renewed.length >= 1, { timeoutMs: 3_000 });

    expect(await admin.del(lock.keys.lock)).toBe(1);
    // Every renewal sent from here on runs after the DEL.
    const deletedAt = performance.now();
    await waitFor(() => seen.lost.length > 0, { timeoutMs: 3_000 });
    expect(seen.lost.map((event) => event.reason)).toEqual(['deleted']);
    // Found by the first renewal that ran after the DEL: at most one was sent between the two.
    expect(renewalsSentBetween(spy, 'deleted', deletedAt, seen.lost[0]!.at)).toBeLessThanOrEqual(1);
    expect(lease.signal.aborted).toBe(true);
    expect(dog.watchedCount).toBe(0);
    // Never re-created by a renewal.
    await delay(dog.renewIntervalMs + 50);
    expect(await admin.exists(lock.keys.lock)).toBe(0);
  });

  it('FLUSHALL: every renewed lease is lost as deleted within one renewal interval', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 1_200 });
    const spy = spyOnRenewals(locks);
    const seen = record(dog);
    const admin = fx.redis();
    const leases = await Promise.all(['a', 'b', 'c'].map((name) => locks.lock(name).acquire()));
    await waitFor(() => seen.renewed.length >= 1, { timeoutMs: 3_000 });

    await admin.flushall();
    // Every renewal sent from here on runs after the flush.
    const flushedAt = performance.now();
    await waitFor(() => seen.lost.length === 3, { timeoutMs: 3_000 });
    expect(seen.lost.map((event) => event.reason)).toEqual(['deleted', 'deleted', 'deleted']);
    expect(seen.lost.map((event) => event.name).sort()).toEqual(['a', 'b', 'c']);
    // Each found by the first renewal that ran after the flush.
    for (const event of seen.lost) {
      expect(renewalsSentBetween(spy, event.name, flushedAt, event.at)).toBeLessThanOrEqual(1);
    }
    expect(leases.every((lease) => lease.signal.aborted)).toBe(true);
    expect(await admin.dbsize()).toBe(0);
  });

  it('Redis killed (SIGKILL) and restarted empty: lost as deleted, no crash, no unhandled rejection', async () => {
    const redis = fx.redis({ retryStrategy: () => 20 });
    const locks = fx.locks({ commandTimeoutMs: 300 }, redis);
    const dog = fx.watchdog(locks, { timeoutMs: 3_000 });
    const seen = record(dog);
    const lease = await locks.lock('killed').acquire();
    await waitFor(() => seen.renewed.length >= 1, { timeoutMs: 5_000 });

    await fx.server.kill();
    await fx.server.restart();
    await waitFor(() => seen.lost.length > 0, { timeoutMs: 5_000 });
    expect(seen.lost.map((event) => event.reason)).toEqual(['deleted']);
    expect(lease.signal.aborted).toBe(true);
    expect(dog.watchedCount).toBe(0);
    expect(dog.stopped).toBe(false);

    // The watchdog keeps working on the restarted server.
    const next = await locks.lock('after-restart').acquire();
    await waitFor(() => seen.renewed.some((event) => event.startedAt > seen.lost[0]!.at), { timeoutMs: 5_000 });
    expect(next.isHeld).toBe(true);
    await next.release();
  });

  it('event-loop stall longer than the lease: the first thing after it is lost, and no renewal is sent for it', async () => {
    const timeoutMs = 600;
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs });
    const spy = spyOnRenewals(locks);
    const lease = await locks.lock('stalled').acquire();
    const seen = record(dog);
    const clientLost: LostEvent[] = [];
    locks.on('lost', (event) => clientLost.push(event));
    await waitFor(() => seen.renewed.length >= 1 && spy.inFlight === 0, { timeoutMs: 3_000 });
    seen.order.length = 0;
    const callsBefore = spy.calls;

    // Blocks this thread the way a long GC pause or a SIGSTOP of the process would.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, timeoutMs * 1.5);
    const resumedAt = performance.now();

    await waitFor(() => seen.order.length > 0, { timeoutMs: 3_000 });
    expect(seen.order[0]).toMatch(/^lost:(unreachable|expired)$/);
    expect(clientLost.map((event) => event.name)).toEqual(['stalled']);
    expect(lease.signal.aborted).toBe(true);
    await delay(2 * dog.renewIntervalMs);
    const sentAfter = spy.sent.slice(callsBefore).filter((call) => call.at >= resumedAt);
    expect(sentAfter.filter((call) => call.names.includes('stalled'))).toEqual([]);
    expect(dog.watchedCount).toBe(0);
    expect(seen.lost).toHaveLength(1);
  });
});
