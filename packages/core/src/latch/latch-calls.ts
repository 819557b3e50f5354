import { callRedis, type CallLimits } from '../port/redis-call.js';
import { defineScripts, requestIdKeepMs, runScript, type Script } from '../scripts/index.js';
import { ints, malformed, unlessForeign } from '../scripts/replies.js';
import type { LatchKeys } from './latch-keys.js';
import latch from './_latch.lua';
import del from './latch-delete.lua';
import down from './latch-down.lua';
import read from './latch-read.lua';
import set from './latch-set.lua';
import type { ResolvedClientOptions } from '../options/options.js';
import type { AcquireContext } from '../engine/kind.js';

/** Payload of `countedDown`: a count-down of a latch, by this client, was applied (not one at 0, which does nothing). */
export interface CountedDownEvent {
  /** The latch's name. */
  readonly name: string;
  /** Always `latch`. */
  readonly kind: 'latch';
  /** The count after it (0: every waiter was woken). */
  readonly count: number;
}

/** The latch's events of a `LockClient`, event → listener arguments (part of `LockClientEvents`). */
export interface LatchEvents {
  /** A count-down latch's `countDown()` was applied (`kind: 'latch'`). */
  countedDown: [event: CountedDownEvent];
}

/** What a count-down latch uses of its client's engine (the `Engine` itself is passed), and nothing more. */
export interface LatchEngine extends Pick<AcquireContext, 'redis' | 'policy' | 'waiters' | 'isClosed'> {
  /** The client's id. */
  readonly clientId: string;
  /** The client's options, every default filled in (`commandTimeoutMs`, `retries` are read). */
  readonly options: ResolvedClientOptions;
  /** Throws ClientClosedError once the client is closed. */
  assertOpen(): void;
  /**
   * The eviction check (and registration) still to be awaited before the first write, if any;
   * `deadline` (monotonic ms) and `signal` bound this caller's wait for it (see Engine.serverReady).
   */
  serverReady(deadline?: number, signal?: AbortSignal): Promise<void> | undefined;
  /** Emits `event` with the payload `build` returns, built only when someone listens; never throws. */
  emitLazily<K extends keyof LatchEvents>(event: K, build: () => LatchEvents[K][0]): void;
}

/** The latch's scripts, one per operation. */
export const latchScripts = defineScripts('latch', { down, set, read, delete: del }, { latch });

/** An array reply of integers; KeyConflictError for the script's foreign-data code. */
function numbers(reply: unknown, name: string): number[] {
  const values = ints('latch', reply);
  if (values.length === 0) throw malformed('latch', reply);
  unlessForeign(values[0]!, name, 'latch');
  return values;
}

function run(engine: LatchEngine, script: Script, keys: LatchKeys, args: (string | number)[], limits?: CallLimits): Promise<unknown> {
  return callRedis(() => runScript(engine.redis, script, [keys.latch, keys.requests], args), engine.policy, limits);
}

/**
 * Counts down by one under `requestId` (one per call, kept by its resends):
 * the count after it, whether it counted, and the latch's time to live in ms
 * (negative: none).
 */
export async function countDownCall(
  engine: LatchEngine,
  name: string,
  keys: LatchKeys,
  ttlMs: number,
  requestId: string,
  limits: CallLimits = {},
): Promise<{ count: number; applied: boolean; pttl: number }> {
  const reply = await run(engine, latchScripts.down, keys, [requestId, keys.channel, ttlMs, requestIdKeepMs(engine.options, limits.deadline)], limits);
  const [count, applied, pttl] = numbers(reply, name);
  return { count: count!, applied: applied === 1, pttl: pttl ?? -2 };
}

/** Sets the count to `count` if the latch is at 0 (or unset): true when it did. */
export async function setCountCall(engine: LatchEngine, name: string, keys: LatchKeys, ttlMs: number, count: number, requestId: string): Promise<boolean> {
  const reply = await run(engine, latchScripts.set, keys, [requestId, keys.channel, ttlMs, requestIdKeepMs(engine.options, undefined), count]);
  return numbers(reply, name)[0] === 1;
}

/** The count now (0 for a latch never set, or expired) and its keys' time to live in ms (negative: none). */
export async function readCall(engine: LatchEngine, name: string, keys: LatchKeys, limits?: CallLimits): Promise<{ count: number; pttl: number }> {
  const [count, pttl] = numbers(await run(engine, latchScripts.read, keys, [], limits), name);
  return { count: count!, pttl: pttl ?? -2 };
}

/** Deletes the latch's keys, waking its waiters (they read 0): true when there was a latch. */
export async function deleteCall(engine: LatchEngine, name: string, keys: LatchKeys): Promise<boolean> {
  return numbers(await run(engine, latchScripts.delete, keys, [keys.channel]), name)[0] === 1;
}
