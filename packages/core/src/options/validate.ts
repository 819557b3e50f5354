import { InvalidArgumentError } from '../errors/errors.js';

/** The longest lease or wait accepted: the largest delay a Node timer can hold (~24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;

/** The longest lock name accepted, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 1024;

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  // JSON.stringify would print NaN and the infinities as `null`.
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol' || typeof value === 'function') return String(typeof value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function fail(what: string, expected: string, value: unknown): never {
  throw new InvalidArgumentError(`Expected \`${what}\` to be ${expected}, got \`${show(value)}\``);
}

/** `value` when it is a whole number in 1..`max` (a duration in ms by default); else `InvalidArgumentError` naming `what`. */
export function positiveInteger(what: string, value: unknown, max = MAX_DURATION_MS): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    fail(what, 'a positive integer', value);
  }
  if (value > max) fail(what, `at most ${max}`, value);
  return value;
}

/**
 * A whole number of milliseconds in min..max: a duration shorter than `min`
 * could never be used (say why in the option's doc comment).
 */
export function integerAtLeast(what: string, value: unknown, min: number, max = MAX_DURATION_MS): number {
  const ms = positiveInteger(what, value, max);
  if (ms < min) fail(what, `at least ${min}`, ms);
  return ms;
}

/** `value` when it is a whole number in 0..`max` (a duration in ms by default); else `InvalidArgumentError` naming `what`. */
export function nonNegativeInteger(what: string, value: unknown, max = MAX_DURATION_MS): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    fail(what, 'a non-negative integer', value);
  }
  if (value > max) fail(what, `at most ${max}`, value);
  return value;
}

/** A finite number in [min, max]. */
export function numberInRange(what: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    fail(what, `a number from ${min} to ${max}`, value);
  }
  return value;
}

/**
 * An unpaired UTF-16 surrogate (a string cut in the middle of an emoji) is
 * sent to Redis as U+FFFD: distinct names would share one key, and a channel
 * name read back would never match the one subscribed.
 */
const LONE_SURROGATE = /\p{Cs}/u;

/** `value` when it is a valid lock name (see nameLike), else `InvalidArgumentError` naming `name`. */
export function lockName(value: unknown): string {
  return nameLike('name', value);
}

/**
 * `value` when it is checked as lock names are (a request key, a fingerprint): a non-empty,
 * well-formed string of at most `MAX_NAME_BYTES` UTF-8 bytes; else `InvalidArgumentError` naming `what`.
 */
export function nameLike(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) fail(what, 'a non-empty string', value);
  if (LONE_SURROGATE.test(value)) fail(what, 'a well-formed string (no unpaired UTF-16 surrogate)', value);
  // A UTF-16 unit is at most 3 UTF-8 bytes: a short name needs no count.
  if (value.length * 3 <= MAX_NAME_BYTES) return value;
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    throw new InvalidArgumentError(
      `Expected \`${what}\` to be at most ${MAX_NAME_BYTES} bytes, got ${bytes} bytes`,
    );
  }
  return value;
}

export function prefix(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || /[{}]/.test(value) || value.length > 128) {
    fail('prefix', 'a non-empty string of at most 128 characters without `{` or `}`', value);
  }
  if (LONE_SURROGATE.test(value)) fail('prefix', 'a well-formed string (no unpaired UTF-16 surrogate)', value);
  return value;
}

/** True for `undefined` and `null`: both mean "use the default", in every option of every call. */
export function isDefault(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** `value` when it is a boolean, else `InvalidArgumentError` naming `what`. */
export function boolean(what: string, value: unknown): boolean {
  if (typeof value !== 'boolean') fail(what, 'a boolean', value);
  return value;
}

export function oneOf<T extends string>(what: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) fail(what, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value);
  return value as T;
}

export function string(what: string, value: unknown): string {
  if (typeof value !== 'string') fail(what, 'a string', value);
  return value;
}

/**
 * A string stored in Redis and read back (a published value): one with an
 * unpaired UTF-16 surrogate is sent as U+FFFD and would come back changed.
 */
export function wellFormedString(what: string, value: unknown): string {
  const text = string(what, value);
  if (LONE_SURROGATE.test(text)) fail(what, 'a well-formed string (no unpaired UTF-16 surrogate)', text);
  return text;
}

export function signal(value: unknown): AbortSignal | undefined {
  if (isDefault(value)) return undefined;
  if (!(value instanceof AbortSignal)) fail('signal', 'an AbortSignal', value);
  return value;
}

/** `value` as an options object (`{}` for `undefined` or `null`), else `InvalidArgumentError` naming `what`. */
export function optionsObject(what: string, value: unknown): Record<string, unknown> {
  if (isDefault(value)) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(what, 'an object', value);
  }
  return value as Record<string, unknown>;
}

export function fn(what: string, value: unknown): void {
  if (typeof value !== 'function') fail(what, 'a function', value);
}

/**
 * The names of a multi-lock: a non-empty array of lock names. A name given
 * twice is taken once (first place kept): transferring from an account to
 * itself locks that account once.
 */
export function lockNames(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) fail('names', 'a non-empty array of lock names', value);
  return [...new Set(value.map((name) => lockName(name)))];
}
