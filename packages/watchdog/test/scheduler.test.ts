import { describe, expect, it, vi } from 'vitest';
import { TickScheduler, type TickOutcome, type TickSchedulerOptions } from '../src/scheduler.js';
import { deferred, useFakeTimersAndCatchUnhandled } from './fake-target.js';

/** The timing rules alone, under fake timers: no Redis, no client. */
describe('TickScheduler', () => {
  useFakeTimersAndCatchUnhandled();

  function make(overrides: Partial<TickSchedulerOptions> = {}) {
    const state = { work: true, ticks: [] as number[], running: 0, maxRunning: 0, errors: [] as unknown[] };
    const scheduler = new TickScheduler({
      intervalMs: 100,
      retryDelayMs: 20,
      hasWork: () => state.work,
      onError: (error) => state.errors.push(error),
      tick: async () => {
        state.ticks.push(performance.now());
        return 'ok';
      },
      ...overrides,
    });
    return { scheduler, state };
  }

  it('ticks every intervalMs after wake(), on one unref\'d timer', async () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const { scheduler, state } = make();
    const t0 = performance.now();
    scheduler.wake();
    scheduler.wake();
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(350);
    expect(state.ticks.map((t) => t - t0)).toEqual([100, 200, 300]);
    expect(vi.getTimerCount()).toBe(1);
    const timers = setTimeoutSpy.mock.results.map((result) => result.value as NodeJS.Timeout);
    expect(timers.length).toBeGreaterThanOrEqual(3);
    expect(timers.every((timer) => timer.hasRef() === false)).toBe(true);
    scheduler.halt();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never overlaps ticks when a tick is slower than the interval', async () => {
    let release: (() => void) | undefined;
    const { scheduler, state } = make({
      tick: async () => {
        state.ticks.push(performance.now());
        state.running++;
        state.maxRunning = Math.max(state.maxRunning, state.running);
        const slow = deferred<void>();
        release = () => slow.resolve();
        await slow.promise;
        state.running--;
        return 'ok';
      },
    });
    scheduler.wake();
    await vi.advanceTimersByTimeAsync(100);
    expect(state.ticks).toHaveLength(1);
    expect(scheduler.ticking).toBe(true);
    // Five intervals pass while the first tick hangs: nothing else starts, nothing is armed.
    await vi.advanceTimersByTimeAsync(500);
    expect(state.ticks).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
    release!();
    await vi.advanceTimersByTimeAsync(0);
    // Overdue: the next tick comes at once, then the cadence resumes.
    await vi.advanceTimersByTimeAsync(1);
    expect(state.ticks).toHaveLength(2);
    release!();
    await vi.advanceTimersByTimeAsync(100);
    expect(state.ticks).toHaveLength(3);
    expect(state.maxRunning).toBe(1);
    release!();
    scheduler.halt();
  });

  it('retries a failed tick after retryDelayMs from its end, and a failing tick never spins', async () => {
    const outcomes: TickOutcome[] = ['retry', 'retry', 'ok'];
    const { scheduler, state } = make({
      tick: async () => {
        state.ticks.push(performance.now());
        return outcomes.shift() ?? 'ok';
      },
    });
    const t0 = performance.now();
    scheduler.wake();
    await vi.advanceTimersByTimeAsync(250);
    expect(state.ticks.map((t) => t - t0)).toEqual([100, 120, 140, 240]);
    scheduler.halt();

    const failing = make({
      tick: () => Promise.reject(new Error('boom')),
    });
    failing.scheduler.wake();
    await vi.advanceTimersByTimeAsync(1_100);
    // First tick at 100, then one per retry delay: (1100 − 100) / 20 + 1.
    expect(failing.state.errors.length).toBe(51);
    expect((failing.state.errors[0] as Error).message).toBe('boom');
    failing.scheduler.halt();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('survives a tick that throws synchronously and an onError that throws', async () => {
    let calls = 0;
    const { scheduler } = make({
      tick: () => {
        calls++;
        throw new Error('sync');
      },
      onError: () => {
        throw new Error('sink');
      },
    });
    scheduler.wake();
    await vi.advanceTimersByTimeAsync(100 + 20 * 3);
    expect(calls).toBe(4);
    expect(scheduler.ticking).toBe(false);
    scheduler.halt();
  });

  it('arms nothing while there is no work, and idle() drops the armed tick', async () => {
    const { scheduler, state } = make();
    state.work = false;
    scheduler.wake();
    expect(vi.getTimerCount()).toBe(0);
    state.work = true;
    scheduler.wake();
    expect(scheduler.armed).toBe(true);
    state.work = false;
    scheduler.idle();
    expect(scheduler.armed).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(500);
    expect(state.ticks).toEqual([]);
  });

  it('stop() clears the timer and waits for the running tick, at most maxWaitMs', async () => {
    const slow = deferred<TickOutcome>();
    const { scheduler, state } = make({
      tick: () => {
        state.ticks.push(performance.now());
        return slow.promise;
      },
    });
    scheduler.wake();
    await vi.advanceTimersByTimeAsync(100);
    let stopped = false;
    const stopping = scheduler.stop(1_000).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(10);
    expect(stopped).toBe(false);
    slow.resolve('ok');
    await stopping;
    expect(stopped).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
    // Stopped for good: wake() after stop arms nothing.
    scheduler.wake();
    expect(vi.getTimerCount()).toBe(0);

    const hung = make({ tick: () => new Promise<TickOutcome>(() => undefined) });
    hung.scheduler.wake();
    await vi.advanceTimersByTimeAsync(100);
    let hungStopped = false;
    const hungStopping = hung.scheduler.stop(1_000).then(() => (hungStopped = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(hungStopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await hungStopping;
    expect(hungStopped).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
