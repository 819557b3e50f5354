import { LockTimeoutError } from '@holdfast/core';
import { uniqueName } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/**
 * The scenarios of Redisson's RedissonCountDownLatchTest (and
 * RedissonCountDownLatchConcurrentTest), on holdfast's API. A Java thread is
 * an async task here; `await(ms)` returning false is a wait that rejects with
 * LockTimeoutError; Redisson's sleeps before a count-down are replaced by an
 * order the test awaits (see "Ports of the peers' suites" in test/README.md).
 */
describe('ports of RedissonCountDownLatchTest', () => {
  const fx = useRedis();

  it('a count-down during a wait lets it through before its waitMs (testAwaitTimeout)', async () => {
    const locks = await fx.client();
    const name = uniqueName('await-timeout');
    const latch = locks.countDownLatch(name);
    expect(await latch.trySetCount(1)).toBe(true);
    expect(await latch.count()).toBe(1);
    const waiting = (await fx.client()).countDownLatch(name).wait({ waitMs: 10_000 });
    await delay(50);
    await latch.countDown();
    await waiting;
  });

  it('a wait with no count-down ends with LockTimeoutError after waitMs (testAwaitTimeoutFail)', async () => {
    const latch = (await fx.client()).countDownLatch(uniqueName('await-timeout-fail'));
    expect(await latch.trySetCount(1)).toBe(true);
    await expect(latch.wait({ waitMs: 200 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await latch.count()).toBe(1);
  });

  it('five waiters on five latch objects, five count-downs: every waiter returns (testMultiAwait, ConcurrentTest)', async () => {
    const name = uniqueName('multi-await');
    const clients = await Promise.all(Array.from({ length: 5 }, () => fx.client()));
    expect(await clients[0]!.countDownLatch(name).trySetCount(5)).toBe(true);
    let returned = 0;
    const waits = clients.map((c) => c.countDownLatch(name).wait({ waitMs: 10_000 }).then(() => returned++));
    await Promise.all(clients.map((c) => c.countDownLatch(name).countDown()));
    await Promise.all(waits);
    expect(returned).toBe(5);
    expect(await clients[0]!.countDownLatch(name).count()).toBe(0);
  });

  it('counts down to 0 and stays there; waits at 0 return at once; an unknown latch reads 0 (testCountDown, testCount)', async () => {
    const locks = await fx.client();
    const latch = locks.countDownLatch(uniqueName('count-down'));
    await latch.trySetCount(2);
    expect(await latch.count()).toBe(2);
    expect(await latch.countDown()).toBe(1);
    expect(await latch.countDown()).toBe(0);
    await latch.wait();
    expect(await latch.countDown()).toBe(0);
    await latch.wait();
    const unknown = locks.countDownLatch(uniqueName('never-set'));
    expect(await unknown.count()).toBe(0);
    expect(await unknown.countDown()).toBe(0);
    await unknown.wait();
  });

  it('trySetCount while counting is refused (testTrySetCount)', async () => {
    const latch = (await fx.client()).countDownLatch(uniqueName('try-set'));
    expect(await latch.trySetCount(1)).toBe(true);
    expect(await latch.trySetCount(2)).toBe(false);
    expect(await latch.count()).toBe(1);
  });

  it('delete: true for a set latch, false for none (testDelete, testDeleteFailed)', async () => {
    const latch = (await fx.client()).countDownLatch(uniqueName('delete'));
    expect(await latch.delete()).toBe(false);
    await latch.trySetCount(1);
    expect(await latch.delete()).toBe(true);
    expect(await latch.count()).toBe(0);
  });

  it('one latch, many count-downs from sibling tasks of one client, one wait (ConcurrentTest, testSingleCountDownAwait_SingleInstance)', async () => {
    const locks = await fx.client();
    const latch = locks.countDownLatch(uniqueName('concurrent'));
    await latch.trySetCount(12);
    const waiting = locks.countDownLatch(latch.name).wait({ waitMs: 10_000 });
    const counts = await Promise.all(Array.from({ length: 12 }, () => latch.countDown()));
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    await waiting;
  });
});
