import { performance } from 'node:perf_hooks';
import { ClientClosedError, LockTimeoutError } from '../errors/errors.js';
import { waitFailure } from '../engine/acquire-loop.js';
import { randomId } from '../engine/owner.js';
import type { CallLimits } from '../port/redis-call.js';
import { callerSignal } from '../telemetry/telemetry.js';
import type { Waiter } from '../engine/waiter.js';
import { countDownCall, deleteCall, readCall, setCountCall, type LatchEngine } from './latch-calls.js';
import { type LatchKeys, latchKeys } from './latch-keys.js';
import type { SyncWaitOptions } from '../options/options.js';
import { latchCount, resolveWaitOptions, resolveLatchOptions, type CountDownLatchOptions } from './latch-options.js';
import { traceSync, type SyncMessage } from '../telemetry/kind-channels.js';
import type { Engine } from '../engine/engine.js';
import * as validate from '../options/validate.js';

/**
 * A named count-down latch (Redisson's `RCountDownLatch`): `trySetCount(n)`
 * arms it, each `countDown()` takes one off, and every `wait()`, in every
 * process, returns once the count is 0. Waiters are woken by the count-down
 * that reaches 0 (or a delete), over pub/sub, all at once, and by the latch's
 * expiry: each reads the count again when the time to live it read with the
 * count has run. Nothing else polls Redis while they wait. Creating one does
 * no I/O (`client.countDownLatch(name)`).
 *
 * @hideconstructor
 */
export class CountDownLatch {
  readonly #engine: LatchEngine;
  /** The latch's name, as given. */
  readonly name: string;
  /** @internal */
  readonly keys: LatchKeys;
  /** How long the latch's keys stay in Redis after its last change, in ms. */
  readonly ttlMs: number;

  /** @internal */
  constructor(engine: LatchEngine, name: string, keys: LatchKeys, ttlMs: number) {
    this.#engine = engine;
    this.name = name;
    this.keys = keys;
    this.ttlMs = ttlMs;
  }

  /**
   * Arms the latch with `count` (a positive integer) when it is at 0 (or was
   * never set, or expired): resolves to true. While it is still counting
   * down, nothing changes and it resolves to false.
   */
  trySetCount(count: number): Promise<boolean> {
    return this.#traced('trySetCount', undefined, async () => {
      const engine = this.#open();
      const n = latchCount(count);
      await engine.serverReady();
      return setCountCall(engine, this.name, this.keys, this.ttlMs, n, randomId());
    });
  }

  /**
   * Takes one off the count; the count-down that reaches 0 wakes every
   * waiter. At 0 it does nothing. Resolves to the count after it. A call
   * resent after a lost reply is counted once.
   */
  countDown(): Promise<number> {
    return this.#traced('countDown', undefined, async () => {
      this.#open();
      return (await this.#countDown({})).count;
    });
  }

  /** The count now: 0 for a latch that reached 0, was never set, or expired. */
  async count(): Promise<number> {
    const engine = this.#open();
    return (await readCall(engine, this.name, this.keys)).count;
  }

  /**
   * Deletes the latch from Redis: it reads as 0 again, and every waiter
   * returns (as for a count-down to 0). Resolves to true when there was a
   * latch (set, and not expired).
   */
  async delete(): Promise<boolean> {
    const engine = this.#open();
    return deleteCall(engine, this.name, this.keys);
  }

  /**
   * Resolves once the count is 0 (at once when it is 0 already, and when the
   * latch expires: it then reads 0). Rejects with
   * `LockTimeoutError` when `waitMs` runs out first, with `signal.reason`
   * when `signal` aborts, with `ClientClosedError` when the client closes.
   */
  wait(options?: SyncWaitOptions): Promise<void> {
    return this.#traced('wait', options, () => this.#wait(options, false));
  }

  /** `countDown()`, then `wait()`: one round trip when it is the last count-down. */
  countDownAndWait(options?: SyncWaitOptions): Promise<void> {
    return this.#traced('countDownAndWait', options, () => this.#wait(options, true));
  }

  #open(): LatchEngine {
    this.#engine.assertOpen();
    return this.#engine;
  }

  async #countDown(limits: CallLimits): Promise<{ count: number; pttl: number }> {
    const engine = this.#engine;
    // Within the caller's wait (countDownAndWait): the check's timeout there is the wait's (see #wait).
    await engine.serverReady(limits.deadline, limits.signal);
    const { count, applied, pttl } = await countDownCall(engine, this.name, this.keys, this.ttlMs, randomId(), limits);
    if (applied) engine.emitLazily('countedDown', () => ({ name: this.name, kind: 'latch' as const, count }));
    return { count, pttl };
  }

  async #wait(options: unknown, countDownFirst: boolean): Promise<void> {
    const engine = this.#open();
    const { waitMs, signal } = resolveWaitOptions(options);
    const started = performance.now();
    const deadline = waitMs === undefined ? undefined : started + waitMs;
    const limits = { deadline, signal };
    signal?.throwIfAborted();
    let waiter: Waiter | undefined;
    try {
      // Subscribed before the first read: a count-down to 0 after it is heard.
      // A subscription not done by the wait's end is not waited for (a hung server).
      waiter = await engine.waiters.join(this.keys.channel, randomId(), deadline ?? Infinity, false, signal);
      // Closed while subscribing: the close that fails every waiter has run already.
      if (engine.isClosed()) throw new ClientClosedError();
      // Over while subscribing: nothing is sent (no count-down after its caller's timeout).
      signal?.throwIfAborted();
      this.#checkDeadline(deadline, started);
      let { count, pttl } = countDownFirst ? await this.#countDown(limits) : await readCall(engine, this.name, this.keys, limits);
      while (count > 0) {
        this.#checkDeadline(deadline, started);
        if (engine.isClosed()) throw new ClientClosedError();
        // The count-down to 0 (or a delete) wakes a waiter with its message.
        // An expiry sends none: the latch reads 0 once its keys' time to live
        // (read with the count) has run, so the waiter looks again then; a
        // change since only put it off, which that look reads. Counted from
        // the reply, the look comes after the expiry, never before. Without a
        // subscription (spinning, a subscribe that failed), it looks again after
        // a backoff step; a subscriber that reconnects wakes every waiter to look again.
        const now = performance.now();
        const expiresIn = pttl >= 0 ? Math.min(pttl, validate.MAX_DURATION_MS) : validate.MAX_DURATION_MS;
        await waiter.sleep(now + waiter.lookAgainIn(expiresIn), signal);
        if (engine.isClosed()) throw new ClientClosedError();
        this.#checkDeadline(deadline, started);
        ({ count, pttl } = await readCall(engine, this.name, this.keys, limits));
      }
    } catch (error) {
      throw waitFailure(error, this.name, started, deadline, engine.isClosed());
    } finally {
      waiter?.dispose();
    }
  }

  #checkDeadline(deadline: number | undefined, started: number): void {
    const now = performance.now();
    if (deadline !== undefined && now >= deadline) throw new LockTimeoutError(this.name, Math.round(now - started));
  }

  #traced<T>(operation: SyncMessage['operation'], options: unknown, run: () => Promise<T>): Promise<T> {
    const signal = callerSignal(options);
    return traceSync(() => ({ name: this.name, kind: 'latch', operation, clientId: this.#engine.clientId, ...(signal ? { signal } : {}) }), run);
  }
}

/** `client.countDownLatch(name, options)`: a count-down latch by name (no I/O). */
export function newCountDownLatch(engine: Engine, name: string, options: CountDownLatchOptions | undefined): CountDownLatch {
  engine.assertOpen();
  const { ttlMs } = resolveLatchOptions(options);
  return new CountDownLatch(engine, name, latchKeys(engine.options.prefix, validate.lockName(name), engine.keyPrefix), ttlMs);
}
