import * as v from '../options/validate.js';
import type { SyncWaitOptions } from '../latch/latch-options.js';

/** The largest party count a barrier accepts. */
export const MAX_PARTIES = 1_000_000;

/** Options of `client.barrier(name, options)`. */
export interface BarrierOptions {
  /**
   * How many parties trip the barrier. Stored with the barrier in Redis by
   * its first use; a client given another count gets
   * `PartyCountMismatchError` until it uses the stored count or changes it
   * with `setParties()`. Required: there is no default.
   */
  readonly parties: number;
}

/** Options of `barrier.arrive()`. */
export interface ArriveOptions extends SyncWaitOptions {
  /**
   * The lease this party holds while it waits, in ms, renewed by the barrier
   * itself every third of it: a party whose lease runs out (its process
   * crashed or froze, its connection died) breaks the generation for every
   * other party within this lease and 1 s.
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

/** The party count of `client.barrier()`. */
export function resolveBarrierOptions(options: unknown): { parties: number } {
  const o = v.optionsObject('options', options) as Partial<BarrierOptions>;
  return { parties: partyCount(o.parties) };
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
