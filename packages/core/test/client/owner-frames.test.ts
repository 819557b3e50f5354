import { executionAsyncId } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/**
 * True while promise hooks are on in this process: each promise continuation
 * then runs under an async id of its own (without hooks, Node does not
 * track promises, and consecutive continuations share one id).
 */
async function promiseHooksOn(): Promise<boolean> {
  await null;
  const first = executionAsyncId();
  await null;
  return first !== executionAsyncId();
}

describe('the ownership context costs nothing once no withLock runs', () => {
  const fx = useRedis();

  it('promise hooks are on only while a withLock callback runs', async () => {
    // Nothing in a fresh test file has turned them on.
    const before = await promiseHooksOn();
    expect(before).toBe(false);
    const locks = await fx.client();
    const lock = locks.lock('hooks');
    let inside = false;
    await lock.withLock(async () => {
      inside = await promiseHooksOn();
      // Re-entry still works inside, across awaits.
      expect(await lock.withLock((l) => l.holdCount)).toBe(2);
    });
    expect(inside).toBe(true);
    // Off again once the callback settled.
    expect(await promiseHooksOn()).toBe(before);
    // Two overlapping callbacks: on until the last one settles.
    let releaseFirst!: () => void;
    const first = lock.withLock(() => new Promise<void>((resolve) => (releaseFirst = resolve)));
    const other = locks.lock('hooks-2').withLock(async () => {
      await null;
      return 'done';
    });
    expect(await other).toBe('done');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await promiseHooksOn()).toBe(true);
    releaseFirst();
    await first;
    expect(await promiseHooksOn()).toBe(before);
  });
});
