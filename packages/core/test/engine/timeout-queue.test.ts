import { RedisCommandError, RedisTimeoutError } from '@holdfast/core';
import { TimeoutQueue, callRedis } from '@holdfast/core/internal';
import { describe, expect, it } from 'vitest';

const never = () => new Promise<never>(() => {});

describe('TimeoutQueue', () => {
  it('fires live entries in order, no earlier than ms after each was added, and never a cancelled one', async () => {
    const queue = new TimeoutQueue(20);
    const fired: string[] = [];
    const t0 = performance.now();
    const at: Record<string, number> = {};
    const a = queue.add(() => ((at.a = performance.now()), fired.push('a')));
    const b = queue.add(() => fired.push('b'));
    queue.add(() => ((at.c = performance.now()), fired.push('c')));
    queue.cancel(b);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(fired).toEqual(['a', 'c']);
    // Timers run in whole milliseconds: within one of the bound counts as due.
    expect(at.a! - t0).toBeGreaterThanOrEqual(19);
    expect(a.fire).toBeUndefined();
    expect(queue.size).toBe(0);
  });

  it('holds nothing once the calls before it are answered, in order or not', () => {
    const queue = new TimeoutQueue(60_000);
    for (let i = 0; i < 1000; i++) queue.cancel(queue.add(() => undefined));
    expect(queue.size).toBe(0);
    const first = queue.add(() => undefined);
    const second = queue.add(() => undefined);
    queue.cancel(second);
    // The second is done but behind a live one: kept until the first is done too.
    expect(queue.size).toBe(2);
    queue.cancel(first);
    expect(queue.size).toBe(0);
    queue.clearIdle();
  });

  it('keeps firing the rest when one callback throws', async () => {
    const queue = new TimeoutQueue(5);
    const fired: number[] = [];
    queue.add(() => {
      throw new Error('boom');
    });
    queue.add(() => fired.push(2));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(fired).toEqual([2]);
  });
});

describe('callRedis with a shared timeout queue', () => {
  it('times a silent attempt out after commandTimeoutMs through the queue, and a nearer deadline on its own timer', async () => {
    const timeouts = new TimeoutQueue(30);
    const policy = { commandTimeoutMs: 30, retries: 0, timeouts };
    const t0 = performance.now();
    const queued = await callRedis(never, policy).catch((e: unknown) => e);
    expect(queued).toBeInstanceOf(RedisTimeoutError);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(29);
    expect(timeouts.size).toBe(0);
    const t1 = performance.now();
    const near = await callRedis(never, { ...policy, retries: 1 }, { deadline: t1 + 10 }).catch((e: unknown) => e);
    expect(near).toBeInstanceOf(RedisTimeoutError);
    expect((queued as RedisTimeoutError).timeoutMs).toBe(30);
    expect((near as RedisTimeoutError).timeoutMs).toBeLessThan(30);
  });

  it('retries after a timeout and resolves with the next answer, mapped', async () => {
    const timeouts = new TimeoutQueue(20);
    let attempts = 0;
    const reply = await callRedis(
      () => (++attempts === 1 ? never() : Promise.resolve(41)),
      { commandTimeoutMs: 20, retries: 2, timeouts },
      undefined,
      (value: number) => value + 1,
    );
    expect(reply).toBe(42);
    expect(attempts).toBe(2);
  });

  it('rejects with what map throws, as it is, without another attempt', async () => {
    let attempts = 0;
    const bad = new Error('malformed');
    const outcome = await callRedis(
      () => (attempts++, Promise.resolve('x')),
      { commandTimeoutMs: 1_000, retries: 3 },
      undefined,
      () => {
        throw bad;
      },
    ).catch((e: unknown) => e);
    expect(outcome).toBe(bad);
    expect(attempts).toBe(1);
  });

  it('reports an attempt that throws synchronously as a failed call', async () => {
    const outcome = await callRedis(
      () => {
        throw new Error('not connected');
      },
      { commandTimeoutMs: 1_000, retries: 0 },
    ).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(RedisCommandError);
    expect((outcome as Error).message).toBe('Redis call failed: not connected');
  });
});
