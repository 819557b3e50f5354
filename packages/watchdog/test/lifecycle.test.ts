import { ClientClosedError, InvalidArgumentError, LockClient, type LostEvent } from '@holdfast/core';
import { activeHandleCount, activeResources, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { Watchdog, type RenewedEvent } from '@holdfast/watchdog';
import { delay, spyOnRenewals, useWatchdogFixture } from './helpers.js';

/** Attaching, stopping and closing, against a real Redis. */
describe('lifecycle', () => {
  const fx = useWatchdogFixture();

  /**
   * Sockets of earlier tests may still be closing when a baseline is taken,
   * so the count must come down to at most the baseline, not exactly to it.
   */
  const settlesTo = (baseline: number) =>
    waitFor(() => activeHandleCount() <= baseline, {
      timeoutMs: 2_000,
      message: () => `still active: ${activeResources().join(', ')} (baseline ${baseline})`,
    });

  it('stop() leaves no handle behind; held leases then run out by their TTL', async () => {
    const redis = fx.redis();
    await redis.ping();
    const locks = fx.locks({}, redis);
    const baseline = activeHandleCount();

    const dog = new Watchdog(locks, { timeoutMs: 600 });
    const spy = spyOnRenewals(locks);
    const clientLost: LostEvent[] = [];
    locks.on('lost', (event) => clientLost.push(event));
    const lease = await locks.lock('left').acquire();
    await waitFor(() => spy.calls >= 1 && spy.inFlight === 0, { timeoutMs: 3_000 });

    await dog.stop();
    expect(dog.stopped).toBe(true);
    expect(dog.watchedCount).toBe(0);
    const calls = spy.calls;
    await settlesTo(baseline);

    // Not renewed any more: the client reports it expired, the watchdog stays silent.
    await waitFor(() => clientLost.length > 0, { timeoutMs: 2_000 });
    expect(clientLost.map((event) => event.reason)).toEqual(['expired']);
    expect(lease.signal.aborted).toBe(true);
    expect(spy.calls).toBe(calls);
    // Later acquisitions get the client's own lease, not renewed.
    const after = await locks.lock('after-stop').acquire();
    expect(after.leaseMs).toBe(locks.options.leaseMs);
    await after.release();
    await settlesTo(baseline);
  });

  it('closing the client stops the watchdog at once; nothing is left running', async () => {
    const baseline = activeHandleCount();
    const redis = fx.redis();
    const locks = new LockClient(redis, { prefix: 'closing' });
    const dog = new Watchdog(locks, { timeoutMs: 600 });
    const spy = spyOnRenewals(locks);
    await locks.lock('held').acquire();
    await waitFor(() => spy.calls >= 1 && spy.inFlight === 0, { timeoutMs: 3_000 });

    await locks.close();
    expect(dog.stopped).toBe(true);
    expect(dog.watchedCount).toBe(0);
    const calls = spy.calls;
    await delay(2 * dog.renewIntervalMs);
    expect(spy.calls).toBe(calls);
    await dog.stop();
    expect(() => new Watchdog(locks)).toThrow(ClientClosedError);

    redis.disconnect();
    await settlesTo(baseline);
  });

  it('one watchdog per client; a new one may attach after stop()', async () => {
    const locks = fx.locks();
    const first = fx.watchdog(locks, { timeoutMs: 600 });
    expect(() => new Watchdog(locks, { timeoutMs: 900 })).toThrow(InvalidArgumentError);
    await first.stop();

    const second = fx.watchdog(locks, { timeoutMs: 900 });
    const lease = await locks.lock('second').acquire();
    expect(lease.leaseMs).toBe(900);
    expect(second.watchedCount).toBe(1);
    await lease.release();
    expect(second.watchedCount).toBe(0);
  });

  it('a throwing listener is reported as `error` and renewal goes on', async () => {
    const locks = fx.locks();
    const dog = fx.watchdog(locks, { timeoutMs: 600 });
    const renewed: RenewedEvent[] = [];
    dog.on('renewed', () => {
      throw new Error('listener bug');
    });
    dog.on('renewed', (event) => renewed.push(event));
    const lease = await locks.lock('noisy').acquire();
    await waitFor(() => renewed.length >= 3, { timeoutMs: 3_000 });
    expect(lease.isHeld).toBe(true);
    const errors = fx.errors.splice(0);
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(errors.every((error) => (error as Error).message === 'listener bug')).toBe(true);
    await lease.release();
  });

  it('await using stops the watchdog at the end of the scope', async () => {
    const locks = fx.locks();
    let outside: Watchdog;
    {
      await using dog = new Watchdog(locks, { timeoutMs: 600 });
      outside = dog;
      expect(dog.stopped).toBe(false);
    }
    expect(outside.stopped).toBe(true);
    const lease = await locks.lock('plain').acquire();
    expect(lease.leaseMs).toBe(locks.options.leaseMs);
    await lease.release();
  });
});
