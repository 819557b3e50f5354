import { InvalidArgumentError } from '../errors/errors.js';
import { driftMarginMs, resolveAcquireOptions } from '../options/options.js';
import * as v from '../options/validate.js';

/** The longest value a leader may publish, in UTF-16 code units (it travels with every read of the leader). */
export const MAX_VALUE_LENGTH = 65_536;

/**
 * The shortest term that can ever be held with `driftFactor`: a term is
 * reported lost its drift margin (`termMs × driftFactor + 2` ms) before the
 * server ends it, so a term no longer than its margin would be lost as it is
 * won, and its campaign would stand again without end. 3 ms below a
 * `driftFactor` of 1/3, 4 ms from it, 5 ms at the largest (0.5).
 */
export function minTermMs(driftFactor: number): number {
  let ms = 1;
  while (ms <= driftMarginMs(ms, driftFactor)) ms += 1;
  return ms;
}

/**
 * A term's length, checked against the client's `driftFactor` (`what`: the
 * option it came from, `termMs` or the default it fell back on).
 */
export function checkTermMs(what: string, termMs: unknown, driftFactor: number): number {
  return v.integerAtLeast(what, termMs, minTermMs(driftFactor));
}

/** Options of `client.election(name, options)`. */
export interface ElectionOptions {
  /**
   * How long a term lasts on the server without renewal, in ms: how long a
   * crashed leader can keep the others waiting. A term is renewed every third
   * of it while held, by the client's watchdog when one is attached and
   * `termMs` is at least the watchdog's `timeoutMs`, otherwise by the
   * election itself. More than its drift margin (`termMs × driftFactor + 2`
   * ms), else `InvalidArgumentError`: at least 3 ms (4 ms with a `driftFactor`
   * of 1/3 or more, 5 ms at 0.5), since a shorter term is over as it is won.
   * @default the attached watchdog's `timeoutMs`, else the client's `leaseMs`
   */
  readonly termMs?: number;
}

/** Options of `election.campaign()`. */
export interface CampaignOptions {
  /** What this candidate publishes once elected (an address, an id): required, a string. */
  readonly value: string;
  /**
   * Longest wait to be elected, in ms: `LockTimeoutError` after it, and the
   * candidate leaves the queue without a trace.
   * @default wait until elected
   */
  readonly waitMs?: number;
  /** Gives up the campaign when aborted: it rejects with `signal.reason` and leaves the queue. */
  readonly signal?: AbortSignal;
}

/** Options of `election.observe()`. */
export interface ObserveOptions {
  /** Ends the iteration (without an error) when aborted. */
  readonly signal?: AbortSignal;
}

/** `election()`'s options, checked (`driftFactor`: the client's). */
export function resolveElectionOptions(options: unknown, driftFactor: number): { termMs: number | undefined } {
  const o = v.optionsObject('options', options) as ElectionOptions;
  return { termMs: v.isDefault(o.termMs) ? undefined : checkTermMs('termMs', o.termMs, driftFactor) };
}

/**
 * A leader's value, checked: a string of at most `MAX_VALUE_LENGTH` UTF-16
 * code units, well-formed (an unpaired surrogate would be stored as U+FFFD and
 * read back changed by `leader()` and `observe()`).
 */
export function electionValue(value: unknown): string {
  const text = v.string('value', value);
  if (text.length > MAX_VALUE_LENGTH) {
    throw new InvalidArgumentError(`Expected \`value\` to be at most ${MAX_VALUE_LENGTH} characters long, got ${text.length}`);
  }
  return v.wellFormedString('value', text);
}

/** `campaign()`'s options, checked. */
export function resolveCampaignOptions(options: unknown): { value: string; waitMs: number | undefined; signal: AbortSignal | undefined } {
  if (v.isDefault(options)) throw new InvalidArgumentError('Expected `options` to be an object with `value`, got `undefined`');
  const o = v.optionsObject('options', options) as Partial<CampaignOptions>;
  const { waitMs, signal } = resolveAcquireOptions({ waitMs: o.waitMs, signal: o.signal });
  return { value: electionValue(o.value), waitMs, signal };
}

/** `observe()`'s options, checked. */
export function resolveObserveOptions(options: unknown): { signal: AbortSignal | undefined } {
  const o = v.optionsObject('options', options) as ObserveOptions;
  return { signal: v.signal(o.signal) };
}
