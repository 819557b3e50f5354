import { RedisTimeoutError } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import type { InstanceOutcome } from '../src/errors.js';
import { fanOut } from '../src/fan-out.js';
import { TimeoutQueue } from '@holdfast/core/internal';
import {
  acquireFailure,
  backoffMs,
  fencingToken,
  holdVerdict,
  isDecided,
  isUsable,
  quorumOf,
  retryAfterMs,
  validityMs,
} from '../src/quorum.js';

const granted = (instance: number, token = 1): InstanceOutcome => ({ instance, status: 'granted', token });
const busy = (instance: number, pttl: number): InstanceOutcome => ({ instance, status: 'busy', pttl });
const ok = (instance: number): InstanceOutcome => ({ instance, status: 'ok' });
const gone = (instance: number, reason: 'deleted' | 'taken' = 'deleted'): InstanceOutcome => ({
  instance,
  status: 'not-held',
  reason,
});
const failed = (instance: number): InstanceOutcome => ({
  instance,
  status: 'error',
  error: new Error('x'),
  timedOut: false,
  replied: false,
});
const pending = (instance: number): InstanceOutcome => ({ instance, status: 'pending' });

describe('quorum arithmetic', () => {
  it('a quorum is a strict majority', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(quorumOf)).toEqual([1, 2, 2, 3, 3, 4, 4]);
  });

  it('validity = lease − elapsed − (lease × driftFactor + 2)', () => {
    expect(validityMs(10_000, 120, 0.01)).toBe(10_000 - 120 - 102);
    expect(validityMs(1_000, 0, 0)).toBe(998);
    expect(validityMs(30_000, 7.6, 0.01)).toBe(Math.floor(30_000 - 7.6 - 302));
    // Exactly used up, and overrun.
    expect(validityMs(200, 198, 0)).toBe(0);
    expect(validityMs(200, 350, 0.01)).toBe(200 - 350 - 4);
  });

  it('no lease is handed out with validity ≤ 0, nor with less than instanceTimeoutMs', () => {
    expect(isUsable(validityMs(200, 198, 0), 1)).toBe(false);
    expect(isUsable(validityMs(200, 350, 0.01), 1)).toBe(false);
    expect(isUsable(-5, 50)).toBe(false);
    expect(isUsable(0, 50)).toBe(false);
    expect(isUsable(49, 50)).toBe(false);
    expect(isUsable(50, 50)).toBe(true);
    expect(isUsable(validityMs(10_000, 40, 0.01), 50)).toBe(true);
  });

  it('the token is the largest granted one', () => {
    expect(fencingToken([10, 6])).toBe(10);
    expect(fencingToken([3, 9, 4])).toBe(9);
    expect(() => fencingToken([])).toThrow(RangeError);
  });

  it('the largest token of one majority can be below an earlier one: the inversion the fence raise prevents', () => {
    // Counters per instance; acquiring on an instance INCRs its counter.
    const run = (raise: boolean) => {
      const counters = [9, 5, 5];
      const acquire = (majority: number[]) => {
        const token = fencingToken(majority.map((i) => ++counters[i]!));
        if (raise) for (const i of majority) counters[i] = Math.max(counters[i]!, token);
        return token;
      };
      return [acquire([0, 1]), acquire([1, 2])];
    };
    expect(run(false)).toEqual([10, 7]);
    const [first, second] = run(true);
    expect(second).toBeGreaterThan(first!);
  });

  it('decides as soon as a majority agrees or can no longer be reached', () => {
    expect(isDecided([granted(0), granted(1), pending(2)], 2)).toBe(true);
    expect(isDecided([granted(0), busy(1, 5), pending(2)], 2)).toBe(false);
    expect(isDecided([busy(0, 5), busy(1, 5), pending(2)], 2)).toBe(true);
    expect(isDecided([failed(0), busy(1, 5), pending(2), pending(3), pending(4)], 3)).toBe(false);
    expect(isDecided([failed(0), busy(1, 5), failed(2), pending(3), pending(4)], 3)).toBe(true);
  });

  it('a failed acquisition is busy unless too few instances answered', () => {
    expect(acquireFailure([busy(0, 100), busy(1, 100), failed(2)], 2)).toBe('busy');
    expect(acquireFailure([granted(0), busy(1, 100), failed(2)], 2)).toBe('busy');
    expect(acquireFailure([granted(0), failed(1), failed(2)], 2)).toBe('unreachable');
    expect(acquireFailure([busy(0, 1), failed(1), failed(2), failed(3), granted(4)], 3)).toBe('unreachable');
  });

  it('operations on a held lock: ok with a majority, lost when a majority is impossible, unknown otherwise', () => {
    expect(holdVerdict([ok(0), ok(1), failed(2)], 2)).toBe('ok');
    expect(holdVerdict([gone(0), gone(1, 'taken'), ok(2)], 2)).toBe('lost');
    expect(holdVerdict([ok(0), gone(1), failed(2)], 2)).toBe('unknown');
    expect(holdVerdict([ok(0), failed(1), pending(2)], 2)).toBe('unknown');
  });

  it('retries when a majority could be free at the earliest', () => {
    expect(retryAfterMs([busy(0, 300), busy(1, 100), failed(2)], 2)).toBe(300);
    expect(retryAfterMs([granted(0), busy(1, 500), busy(2, 200)], 2)).toBe(200);
    expect(retryAfterMs([failed(0), failed(1), busy(2, 200)], 2)).toBe(Infinity);
  });

  it('backoff is jittered, exponential and capped', () => {
    expect(backoffMs(0, 100, () => 0)).toBe(50);
    expect(backoffMs(0, 100, () => 1)).toBe(100);
    expect(backoffMs(3, 100, () => 1)).toBe(800);
    expect(backoffMs(50, 100, () => 1)).toBe(3_200);
  });
});

describe('fanOut', () => {
  const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
  const classify = (instance: number, value: boolean): InstanceOutcome =>
    value ? granted(instance) : busy(instance, 1);

  it('returns at the majority without waiting for the slow instance, which then reports late', async () => {
    const late: number[] = [];
    // The slow instance answers only when the test lets it: returning before that shows the
    // majority was not kept waiting, whatever the machine's speed.
    let answerSlow!: (value: boolean) => void;
    const slow = new Promise<boolean>((resolve) => (answerSlow = resolve));
    const { outcomes } = await fanOut(3, (i) => (i === 2 ? slow : later(5, true)), {
      timeoutMs: 60_000,
      classify,
      decided: (o) => isDecided(o, 2),
      onLate: (i) => late.push(i),
    });
    expect(outcomes.map((o) => o.status)).toEqual(['granted', 'granted', 'pending']);
    expect(late).toEqual([]);
    answerSlow(true);
    await later(0, undefined);
    expect(late).toEqual([2]);
  });

  it('turns silence into timeout errors at timeoutMs, and rejections into errors', async () => {
    const { outcomes } = await fanOut(
      3,
      (i) =>
        i === 0 ? later(1, true) : i === 1 ? Promise.reject(new Error('refused')) : new Promise<boolean>(() => {}),
      { timeoutMs: 50, classify, decided: () => false },
    );
    expect(outcomes[0]!.status).toBe('granted');
    expect(outcomes[1]).toMatchObject({ status: 'error', timedOut: false });
    expect(outcomes[2]).toMatchObject({ status: 'error', timedOut: true });
    expect((outcomes[2] as { error: unknown }).error).toBeInstanceOf(RedisTimeoutError);
  });

  it('on a shared timeout queue: silence times out, in order, while answered fan-outs leave no timer', async () => {
    const timeouts = new TimeoutQueue(50);
    const options = { timeoutMs: 50, timeouts, classify, decided: () => false };
    // Answered fan-outs cancel their entries; the silent ones after them still time out.
    await fanOut(1, () => later(1, true), options);
    const first = fanOut(1, () => new Promise<boolean>(() => {}), options);
    const second = fanOut(2, (i) => (i === 0 ? later(1, false) : new Promise<boolean>(() => {})), options);
    const [a, b] = await Promise.all([first, second]);
    expect(a.outcomes[0]).toMatchObject({ status: 'error', timedOut: true });
    expect(b.outcomes[0]!.status).toBe('busy');
    expect(b.outcomes[1]).toMatchObject({ status: 'error', timedOut: true });
    // Nothing live is left: the queue drops its timer.
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await fanOut(1, () => later(1, true), options);
    timeouts.clearIdle();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
  });

  it('a send that throws synchronously is an error answer', async () => {
    const { outcomes } = await fanOut(
      1,
      () => {
        throw new Error('sync');
      },
      { timeoutMs: 50, classify, decided: () => false },
    );
    expect(outcomes[0]).toMatchObject({ status: 'error', timedOut: false });
  });
});
