import { InvalidArgumentError, LockLostError, type RenewalResult } from '@holdfast/core';
import { describe, expect, it, vi } from 'vitest';
import { Watchdog, type LeaseLostEvent, type RenewalFailedEvent, type RenewedEvent } from '@holdfast/watchdog';
import { FakeTarget, deferred, useFakeTimersAndCatchUnhandled } from './fake-target.js';

/** The watchdog's tick logic against a fake RenewalTarget, under fake timers. */
describe('Watchdog (fake target, fake timers)', () => {
  useFakeTimersAndCatchUnhandled();

  function setup(options = { timeoutMs: 900 }) {
    const target = new FakeTarget();
    const dog = new Watchdog(target, options);
    const events = {
      renewed: [] as RenewedEvent[],
      failed: [] as RenewalFailedEvent[],
      lost: [] as LeaseLostEvent[],
      errors: [] as unknown[],
    };
    dog.on('renewed', (event) => events.renewed.push(event));
    dog.on('renewalFailed', (event) => events.failed.push(event));
    dog.on('lost', (event) => {
      target.log.push(`lost-event:${event.name}:${event.reason}`);
      events.lost.push(event);
    });
    dog.on('error', (error) => events.errors.push(error));
    return { target, dog, events };
  }

  it('validates options with the core phrasing and fills in defaults', () => {
    const target = new FakeTarget();
    expect(() => new Watchdog(target, { timeoutMs: -5 })).toThrow(
      new InvalidArgumentError('Expected `timeoutMs` to be a positive integer, got `-5`'),
    );
    expect(() => new Watchdog(target, { timeoutMs: 1.5 })).toThrow('Expected `timeoutMs` to be a positive integer, got `1.5`');
    expect(() => new Watchdog(target, { timeoutMs: 600, renewIntervalMs: 600 })).toThrow(
      'Expected `renewIntervalMs` to be less than `timeoutMs` (600), got `600`',
    );
    expect(() => new Watchdog(target, { retryDelayMs: 0 })).toThrow('Expected `retryDelayMs` to be a positive integer, got `0`');
    expect(() => new Watchdog(target, 'fast' as never)).toThrow('Expected `options` to be an object, got `"fast"`');
    expect(() => new Watchdog({} as never)).toThrow(InvalidArgumentError);
    expect(target.renewer).toBeUndefined();

    const dog = new Watchdog(target);
    expect([dog.timeoutMs, dog.renewIntervalMs, dog.retryDelayMs]).toEqual([30_000, 10_000, 1_000]);
    expect(target.renewer).toBe(dog);
    const custom = new Watchdog(new FakeTarget(), { timeoutMs: 600, retryDelayMs: 5_000 });
    expect([custom.renewIntervalMs, custom.retryDelayMs]).toEqual([200, 200]);
  });

  it('each tick sweeps first, renews every watched hold in one call, and confirms with the send time', async () => {
    const { target, dog, events } = setup();
    const a = target.grant('a');
    const b = target.grant('b');
    expect(dog.watchedCount).toBe(2);
    await vi.advanceTimersByTimeAsync(299);
    expect(target.renewCalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(target.log.slice(1)).toEqual(['sweep', 'renew:a,b', 'sweep', 'confirm:a', 'confirm:b']);
    const sentAt = target.renewCalls[0]!.at;
    expect(target.confirmed).toEqual([
      { name: 'a', startedAt: sentAt },
      { name: 'b', startedAt: sentAt },
    ]);
    expect(events.renewed).toEqual([{ count: 2, lost: 0, failed: 0, durationMs: 0, startedAt: sentAt }]);
    await vi.advanceTimersByTimeAsync(600);
    expect(target.renewCalls.map((call) => call.at - sentAt)).toEqual([0, 300, 600]);
    expect([a.active, b.active]).toEqual([true, true]);
    await dog.stop();
  });

  it('a deleted or taken result marks the hold lost once; the loss is emitted from lost()', async () => {
    const { target, dog, events } = setup();
    const a = target.grant('a');
    target.grant('b');
    target.grant('c');
    target.respond = (holds) =>
      Promise.resolve(
        holds.map((hold): RenewalResult =>
          hold.name === 'a' ? { status: 'lost', reason: 'deleted' } : hold.name === 'b' ? { status: 'lost', reason: 'taken' } : { status: 'renewed' },
        ),
      );
    await vi.advanceTimersByTimeAsync(300);
    expect(events.lost.map((event) => [event.name, event.reason])).toEqual([
      ['a', 'deleted'],
      ['b', 'taken'],
    ]);
    expect(events.lost[0]!.error).toBeInstanceOf(LockLostError);
    expect(events.lost[0]!.token).toBe(a.token);
    expect(events.renewed).toEqual([expect.objectContaining({ count: 1, lost: 2, failed: 0 })]);
    expect(dog.watchedCount).toBe(1);
    // Never sent again.
    await vi.advanceTimersByTimeAsync(300);
    expect(target.renewCalls.at(-1)!.names).toEqual(['c']);
    await dog.stop();
  });

  it('ignores results for holds released or lost while the call was out', async () => {
    const { target, dog, events } = setup();
    const a = target.grant('a');
    const b = target.grant('b');
    const reply = deferred<RenewalResult[]>();
    target.respond = () => reply.promise;
    await vi.advanceTimersByTimeAsync(300);
    expect(target.renewCalls).toHaveLength(1);
    target.release(a);
    target.markLost(b, 'deleted');
    reply.resolve([{ status: 'renewed' }, { status: 'lost', reason: 'taken' }]);
    await vi.advanceTimersByTimeAsync(0);
    expect(target.confirmed).toEqual([]);
    expect(target.log.filter((line) => line.startsWith('markLost'))).toEqual(['markLost:b:deleted']);
    expect(events.lost.map((event) => event.reason)).toEqual(['deleted']);
    expect(events.renewed).toEqual([]);
    // Nothing left to renew: no timer either.
    expect(dog.watchedCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a failed tick emits renewalFailed and retries after retryDelayMs until it succeeds', async () => {
    const { target, dog, events } = setup({ timeoutMs: 900 });
    target.grant('a');
    const error = new Error('Redis is down');
    let failures = 2;
    target.respond = (holds) =>
      Promise.resolve(holds.map((): RenewalResult => (failures > 0 ? { status: 'failed', error } : { status: 'renewed' })));
    await vi.advanceTimersByTimeAsync(300);
    failures--;
    expect(events.failed).toEqual([{ error, count: 1, consecutiveFailures: 1, durationMs: 0 }]);
    await vi.advanceTimersByTimeAsync(dog.retryDelayMs);
    failures--;
    expect(events.failed.map((event) => event.consecutiveFailures)).toEqual([1, 2]);
    await vi.advanceTimersByTimeAsync(dog.retryDelayMs);
    expect(events.renewed).toHaveLength(1);
    const t = target.renewCalls.map((call) => call.at - target.renewCalls[0]!.at);
    expect(t).toEqual([0, 75, 150]);
    // Back to the normal cadence.
    await vi.advanceTimersByTimeAsync(300);
    expect(target.renewCalls).toHaveLength(4);
    await dog.stop();
  });

  it('a target that rejects or answers short only costs a tick', async () => {
    const { target, dog, events } = setup();
    target.grant('a');
    target.respond = () => Promise.reject(new Error('broken target'));
    await vi.advanceTimersByTimeAsync(300);
    expect((events.failed[0]!.error as Error).message).toBe('broken target');
    target.respond = () => Promise.resolve([]);
    await vi.advanceTimersByTimeAsync(dog.retryDelayMs);
    expect(events.failed[1]!.error).toBeInstanceOf(TypeError);
    target.respond = (holds) => Promise.resolve(holds.map(() => ({ status: 'renewed' as const })));
    await vi.advanceTimersByTimeAsync(dog.retryDelayMs);
    expect(events.renewed).toHaveLength(1);
    expect(events.errors).toEqual([]);
    await dog.stop();
  });

  it('a throwing listener goes to `error` and does not break the ticks', async () => {
    const { target, dog, events } = setup();
    target.grant('a');
    dog.on('renewed', () => {
      throw new Error('listener bug');
    });
    await vi.advanceTimersByTimeAsync(900);
    expect(events.renewed).toHaveLength(3);
    expect(events.errors.map((error) => (error as Error).message)).toEqual(['listener bug', 'listener bug', 'listener bug']);
    await dog.stop();
  });

  it('after a stall, the first tick reports what ran out before sending anything for it', async () => {
    const { target, dog } = setup();
    const stale = target.grant('stale');
    target.grant('fresh');
    // As if the process had been frozen past stale's deadline.
    stale.deadline = performance.now() - 1;
    await vi.advanceTimersByTimeAsync(300);
    expect(target.log.slice(1, 5)).toEqual(['sweep', 'markLost:stale:unreachable', 'lost-event:stale:unreachable', 'renew:fresh']);
    expect(target.renewCalls.flatMap((call) => call.names)).not.toContain('stale');
    await dog.stop();
  });

  it('a reply landing after the deadline does not revive the hold', async () => {
    const { target, dog, events } = setup();
    const a = target.grant('a');
    const reply = deferred<RenewalResult[]>();
    target.respond = () => reply.promise;
    await vi.advanceTimersByTimeAsync(300);
    a.deadline = performance.now() - 1;
    reply.resolve([{ status: 'renewed' }]);
    await vi.advanceTimersByTimeAsync(0);
    expect(target.confirmed).toEqual([]);
    expect(events.lost.map((event) => event.reason)).toEqual(['unreachable']);
    await dog.stop();
  });

  it('stop() detaches, waits for the tick in flight, drops its results and leaves no timer', async () => {
    const { target, dog, events } = setup();
    target.grant('a');
    const reply = deferred<RenewalResult[]>();
    target.respond = () => reply.promise;
    await vi.advanceTimersByTimeAsync(300);
    let stopped = false;
    const stopping = dog.stop().then(() => (stopped = true));
    expect(dog.stop()).toBe(dog.stop());
    expect(target.renewer).toBeUndefined();
    expect(dog.stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(50);
    expect(stopped).toBe(false);
    reply.resolve([{ status: 'lost', reason: 'taken' }]);
    await stopping;
    expect(target.log).not.toContain('markLost:a:taken');
    expect(events.lost).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
    // A hold offered after stop is not renewed.
    dog.watch(target.grant('late'));
    expect(dog.watchedCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('targetClosed() stops at once without waiting, leaving no timer', async () => {
    const { target, dog } = setup();
    target.grant('a');
    expect(vi.getTimerCount()).toBe(1);
    target.renewer!.targetClosed();
    expect(dog.stopped).toBe(true);
    expect(dog.watchedCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(target.renewCalls).toEqual([]);
    await dog.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('releasing the last hold drops the armed tick', async () => {
    const { target, dog } = setup();
    const a = target.grant('a');
    expect(vi.getTimerCount()).toBe(1);
    target.release(a);
    expect(dog.watchedCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(target.renewCalls).toEqual([]);
    await dog.stop();
  });
});
