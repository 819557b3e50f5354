import { InvalidArgumentError, MAX_DURATION_MS, MAX_NAME_BYTES } from '@holdfast/core';

// The decorators' and module's option checks, in the phrasing every holdfast
// package uses (`Expected \`x\` to be …, got \`…\``): its own, so the module
// needs core's public API only. Names are checked as core checks lock names,
// so a bad name fails when the class is decorated, not at its first call.

export { MAX_DURATION_MS, MAX_NAME_BYTES };

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

/** `undefined` and `null` both mean "use the default". */
export function isDefault(value: unknown): value is undefined | null {
  return value === undefined || value === null;
}

/** A whole number of milliseconds in 1..MAX_DURATION_MS. */
export function positiveInteger(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) fail(what, 'a positive integer', value);
  if (value > MAX_DURATION_MS) fail(what, `at most ${MAX_DURATION_MS}`, value);
  return value;
}

/** A whole number of milliseconds in 0..MAX_DURATION_MS. */
export function nonNegativeInteger(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) fail(what, 'a non-negative integer', value);
  if (value > MAX_DURATION_MS) fail(what, `at most ${MAX_DURATION_MS}`, value);
  return value;
}

export function boolean(what: string, value: unknown): boolean {
  if (typeof value !== 'boolean') fail(what, 'a boolean', value);
  return value;
}

export function optionsObject(what: string, value: unknown): Record<string, unknown> {
  if (isDefault(value)) return {};
  if (typeof value !== 'object' || Array.isArray(value)) fail(what, 'an object', value);
  return value as Record<string, unknown>;
}

// An unpaired UTF-16 surrogate is sent to Redis as U+FFFD: distinct names would share one key.
const LONE_SURROGATE = /\p{Cs}/u;

/** A string checked as core checks lock names, named `what` in the error. */
export function nameLike(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) fail(what, 'a non-empty string', value);
  if (LONE_SURROGATE.test(value)) fail(what, 'a well-formed string (no unpaired UTF-16 surrogate)', value);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_NAME_BYTES) throw new InvalidArgumentError(`Expected \`${what}\` to be at most ${MAX_NAME_BYTES} bytes, got ${bytes} bytes`);
  return value;
}

/** A lock name, checked as core checks it. */
export function lockName(value: unknown): string {
  return nameLike('name', value);
}
