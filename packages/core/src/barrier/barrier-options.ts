import * as v from '../options/validate.js';
import type { SyncWaitOptions } from '../options/options.js';

/** The largest party count a barrier accepts. */
export const MAX_PARTIES = 1_000_000;

/** The default of `BarrierOptions.ttlMs`: one day. */
export const DEFAULT_BARRIER_TTL_MS = 86_400_000;

/** Options of `client.barrier(name, options)`. */
export interface BarrierOptions {
  /**
   * How many parties trip the barrier. Stored with the barrier in Redis by
   * its first use; a client given another count gets
   * `PartyCountMismatchError` until it uses the stored count or changes it
   * with `setParties()`. Required: there is no default.
   */
  readonly parties: number;
  /**
   * How long the barrier's keys stay in Redis after its last arrival,
   * renewal or `setParties()`, in ms (never less than a waiting party's
   * lease and the time its arrival is remembered for resends), so that an
   * idle barrier does not stay for ever. A barrier that expired is as one
   * never used: the next arrival stores its count again, and its generations
   * start again at 0.
   * @default 86_400_000 (one day)
   */
  readonly ttlMs?: number;
}

/** Options of `barrier.arrive()`. */
export interface ArriveOptions extends SyncWaitOptions {
  /**
   * The lease this party holds while it waits, in ms, renewed by the barrier
   * itself every third of it: a party whose lease runs out (its process
   * crashed or froze, its connection died) breaks the generation for every
   * other party within this lease and 1 s. A party counts toward a trip only
   * while its lease is live, and with `waitMs` its lease never runs past its
   * wait: a party that times out stops counting then, even when Redis cannot
   * be reached.
   * @default the client's `leaseMs` (or the watchdog's `timeoutMs`)
   */
  readonly leaseMs?: number;
}

/** `ArriveOptions`, checked. */
export interface ResolvedArriveOptions {
  readonly leaseMs: number | undefined;
  readonly waitMs: number | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The options of `client.barrier()`, checked. */
export function resolveBarrierOptions(options: unknown): { parties: number; ttlMs: number } {
  const o = v.optionsObject('options', options) as Partial<BarrierOptions>;
  return { parties: partyCount(o.parties), ttlMs: v.isDefault(o.ttlMs) ? DEFAULT_BARRIER_TTL_MS : v.positiveInteger('ttlMs', o.ttlMs) };
}

/** A party count: a whole number in 1..MAX_PARTIES. */
export function partyCount(value: unknown): number {
  return v.positiveInteger('parties', value, MAX_PARTIES);
}

export function resolveArriveOptions(options: unknown): ResolvedArriveOptions {
  const o = v.optionsObject('options', options) as ArriveOptions;
  return {
    leaseMs: v.isDefault(o.leaseMs) ? undefined : v.positiveInteger('leaseMs', o.leaseMs),
    waitMs: v.isDefault(o.waitMs) ? undefined : v.positiveInteger('waitMs', o.waitMs),
    signal: v.signal(o.signal),
  };
}
