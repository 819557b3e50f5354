import * as v from '../options/validate.js';
import type { SyncWaitOptions } from '../options/options.js';

/** The largest count a latch accepts. */
export const MAX_LATCH_COUNT = 1_000_000_000;

/** The default of `CountDownLatchOptions.ttlMs`: one day. */
export const DEFAULT_LATCH_TTL_MS = 86_400_000;

/** Options of `client.countDownLatch(name, options)`. */
export interface CountDownLatchOptions {
  /**
   * How long the latch's keys stay in Redis after its last change (a
   * `trySetCount` or a `countDown`), in ms, so that an abandoned latch does
   * not stay for ever. A latch that expired reads as 0, as one never set,
   * and its waiters return. Make it longer than the longest gap between two
   * count-downs.
   * @default 86_400_000 (one day)
   */
  readonly ttlMs?: number;
}

/** `SyncWaitOptions`, checked. */
export interface ResolvedWaitOptions {
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The options of `client.countDownLatch()`, checked. */
export function resolveLatchOptions(options: unknown): { ttlMs: number } {
  const o = v.optionsObject('options', options) as CountDownLatchOptions;
  return { ttlMs: v.isDefault(o.ttlMs) ? DEFAULT_LATCH_TTL_MS : v.positiveInteger('ttlMs', o.ttlMs) };
}

/** The options of a wait, checked. */
export function resolveWaitOptions(options: unknown): ResolvedWaitOptions {
  const o = v.optionsObject('options', options) as SyncWaitOptions;
  return {
    waitMs: v.isDefault(o.waitMs) ? undefined : v.positiveInteger('waitMs', o.waitMs),
    signal: v.signal(o.signal),
  };
}

/** A latch count: a whole number in 1..MAX_LATCH_COUNT. */
export function latchCount(value: unknown): number {
  return v.positiveInteger('count', value, MAX_LATCH_COUNT);
}
