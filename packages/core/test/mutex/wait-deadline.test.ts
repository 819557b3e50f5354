import { LockClient, LockTimeoutError, RedisTimeoutError } from '@holdfast/core';
import { waitFor, sameSlotNames } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, queued } from '../helpers.js';
import { useOwnServer } from '../own-server.js';

/**
 * A wait bounded by `waitMs` (or by a signal) against a server that stopped
 * answering (SIGSTOP) ends at its bound, not up to one `commandTimeoutMs`
 * later, and says how long it really waited. The call it stopped waiting for
 * may still be applied when the server resumes: what it did is undone by its
 * request id, so no hold is left behind.
 *
 * `commandTimeoutMs` is a minute and the tests' own timeout 20 s: a wait
 * that lasted until a command timeout fails the test, whatever the machine's speed.
 */
describe('a bounded wait against a hung server', () => {
  const own = useOwnServer({ beforeCleanup: () => own.server.resume() });
  const COMMAND_TIMEOUT_MS = 60_000;
  const WAIT_MS = 500;

  /** A client on its own connection, closed after the test (after the server resumed). */
  function client(prefix: string): { locks: LockClient; redis: ReturnType<typeof own.server.client> } {
    const redis = own.server.client();
    const locks = new LockClient(redis, { prefix, commandTimeoutMs: COMMAND_TIMEOUT_MS });
    own.onCleanup(() => locks.close());
    return { locks, redis };
  }

  /** Acquires, and reports the outcome with the time it took as the caller saw it. */
  async function timed(acquiring: () => Promise<unknown>): Promise<{ error: unknown; elapsedMs: number }> {
    const started = performance.now();
    const error = await acquiring().then(
      () => undefined,
      (e: unknown) => e,
    );
    return { error, elapsedMs: performance.now() - started };
  }

  /** The error reports no less than waitMs and no more than the caller saw; and it came before any command timed out. */
  function expectTimedOut({ error, elapsedMs }: { error: unknown; elapsedMs: number }, name: string): void {
    expect(error).toBeInstanceOf(LockTimeoutError);
    const { lockName, waitedMs, message } = error as LockTimeoutError;
    expect(lockName).toBe(name);
    expect(message).toBe(`Timed out after ${waitedMs} ms waiting for lock \`${name}\``);
    expect(waitedMs).toBeGreaterThanOrEqual(WAIT_MS);
    expect(waitedMs).toBeLessThanOrEqual(Math.ceil(elapsedMs));
    expect(elapsedMs).toBeLessThan(COMMAND_TIMEOUT_MS);
  }

  it('a queued wait rejects at waitMs when the server hangs while it sleeps', async () => {
    const { locks: holder } = client('sleeping');
    const { locks: waiter, redis } = client('sleeping');
    const lease = await holder.lock('held').acquire({ leaseMs: 30_000 });
    const outcome = timed(() => waiter.lock('held').acquire({ waitMs: WAIT_MS }));
    await queued(redis, waiter.lock('held').keys.queue);
    await own.server.pause();
    expectTimedOut(await outcome, 'held');
    await own.server.resume();
    // Its clean-up, sent before it rejected, ran once the server resumed: no queue entry left.
    await waitFor(async () => (await redis.llen(waiter.lock('held').keys.queue)) === 0);
    await lease.release();
    expect(await redis.exists(waiter.lock('held').keys.lock)).toBe(0);
  }, 20_000);

  it('an attempt in flight at waitMs is not waited for, and what the server grants it later is released', async () => {
    const { locks: waiter, redis } = client('in-flight');
    // The server check and the client's registration are done: the next call goes out at once.
    await (await waiter.lock('warm-up').tryAcquire())?.release();
    await own.server.pause();
    const outcome = await timed(() => waiter.lock('free').acquire({ leaseMs: 30_000, waitMs: WAIT_MS }));
    expectTimedOut(outcome, 'free');
    expect((outcome.error as LockTimeoutError).cause).toBeInstanceOf(RedisTimeoutError);
    await own.server.resume();
    // Granted a 30 s lease when the server resumed, and released by the clean-up that followed it.
    await waitFor(async () => (await redis.exists(waiter.lock('free').keys.lock)) === 0);
  }, 20_000);

  it('a multi-lock queued on a group of one hash slot rejects at waitMs when the server hangs', async () => {
    const { locks: holder } = client('multi');
    const { locks: waiter, redis } = client('multi');
    const names = sameSlotNames('group', 2);
    const lease = await holder.lock(names[1]!).acquire({ leaseMs: 30_000 });
    const outcome = timed(() => waiter.multiLock(names).acquire({ waitMs: WAIT_MS }));
    await queued(redis, waiter.lock(names[1]!).keys.queue);
    await own.server.pause();
    expectTimedOut(await outcome, names[1]!);
    await own.server.resume();
    await waitFor(async () => (await redis.llen(waiter.lock(names[1]!).keys.queue)) === 0);
    await lease.release();
    expect(await redis.exists(waiter.lock(names[0]!).keys.lock, waiter.lock(names[1]!).keys.lock)).toBe(0);
  }, 20_000);

  it("a first acquisition held up by the client's server check rejects at waitMs", async () => {
    const { locks: waiter, redis } = client('check');
    await redis.ping();
    await own.server.pause();
    expectTimedOut(await timed(() => waiter.lock('checked').acquire({ waitMs: WAIT_MS })), 'checked');
    expectTimedOut(await timed(() => waiter.multiLock(sameSlotNames('checked', 2)).acquire({ waitMs: WAIT_MS })), 'checked-0');
  }, 20_000);

  // The other kinds' waits share the client's first server check with every acquisition: the
  // first call of a fresh client waits for it no longer than its `waitMs` either. (A barrier
  // times out there before it arrives: nothing of it can count.)
  it.each<[string, (locks: LockClient) => Promise<unknown>]>([
    ['a latch count-down and wait', (locks) => locks.countDownLatch('kind').countDownAndWait({ waitMs: WAIT_MS })],
    ['an election campaign', (locks) => locks.election('kind').campaign({ value: 'candidate', waitMs: WAIT_MS })],
    ['a barrier arrival', (locks) => locks.barrier('kind', { parties: 2 }).arrive({ waitMs: WAIT_MS })],
  ])("%s held up by the client's server check rejects at waitMs", async (_, waiting) => {
    const { locks, redis } = client('kinds');
    await redis.ping();
    await own.server.pause();
    expectTimedOut(await timed(() => waiting(locks)), 'kind');
  }, 20_000);

  it('a barrier arrival whose subscription hangs rejects at waitMs, before it arrives', async () => {
    const { locks, redis } = client('subscribing');
    // The server check is done; the subscription of the barrier's channel is not.
    await (await locks.lock('warm-up').tryAcquire())?.release();
    await own.server.pause();
    const barrier = locks.barrier('kind', { parties: 2 });
    expectTimedOut(await timed(() => barrier.arrive({ waitMs: WAIT_MS })), 'kind');
    await own.server.resume();
    await redis.ping();
    // Nothing of it was sent: no arrival that could count toward a trip.
    expect((await barrier.state()).waiting).toBe(0);
  }, 20_000);

  // The time a wait reports runs from its call, the server check included, wherever it ends.
  it.each<[string, string, (holder: LockClient) => Promise<unknown>, (waiter: LockClient) => Promise<unknown>]>([
    [
      'an election campaign',
      'slow',
      (holder) => holder.election('slow').campaign({ value: 'leader' }),
      (waiter) => waiter.election('slow').campaign({ value: 'candidate', waitMs: WAIT_MS }),
    ],
    [
      'a multi-lock',
      sameSlotNames('slow', 2)[1]!,
      (holder) => holder.lock(sameSlotNames('slow', 2)[1]!).acquire({ leaseMs: 30_000 }),
      (waiter) => waiter.multiLock(sameSlotNames('slow', 2)).acquire({ waitMs: WAIT_MS }),
    ],
  ])('%s queued after a slow server check reports the time waited since its call', async (_, name, holding, waiting) => {
    const { locks: holder } = client('slow-check');
    const { locks: waiter, redis } = client('slow-check');
    await holding(holder);
    await redis.ping();
    await own.server.pause();
    const outcome = timed(() => waiting(waiter));
    // The client's first server check waits this long at least; then the wait queues and times out.
    await delay(WAIT_MS / 2);
    await own.server.resume();
    expectTimedOut(await outcome, name);
  }, 20_000);

  it('an abort ends a queued wait and an attempt in flight at once, and both are undone', async () => {
    const { locks: holder } = client('abort');
    const { locks: waiter, redis } = client('abort');
    const lease = await holder.lock('held').acquire({ leaseMs: 30_000 });
    const controller = new AbortController();
    const sleeping = waiter.lock('held').acquire({ signal: controller.signal });
    await queued(redis, waiter.lock('held').keys.queue);
    await own.server.pause();
    const inFlight = waiter.lock('free').acquire({ leaseMs: 30_000, signal: controller.signal });
    const reason = new Error('shutting down');
    const started = performance.now();
    controller.abort(reason);
    expect(await Promise.allSettled([sleeping, inFlight])).toEqual([
      { status: 'rejected', reason },
      { status: 'rejected', reason },
    ]);
    expect(performance.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS);
    await own.server.resume();
    await waitFor(async () => (await redis.llen(waiter.lock('held').keys.queue)) === 0);
    await waitFor(async () => (await redis.exists(waiter.lock('free').keys.lock)) === 0);
    await lease.release();
  }, 20_000);
});
