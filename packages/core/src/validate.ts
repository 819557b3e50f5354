import { InvalidArgumentError } from './errors.js';

/** The longest lease or wait accepted: the largest delay a Node timer can hold (~24.8 days). */
export const MAX_DURATION_MS = 2_147_483_647;

/** The longest lock name accepted, in UTF-8 bytes. */
export const MAX_NAME_BYTES = 1024;

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
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

/** A whole number of milliseconds in 1..max. */
export function positiveInteger(what: string, value: unknown, max = MAX_DURATION_MS): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    fail(what, 'a positive integer', value);
  }
  if (value > max) fail(what, `at most ${max}`, value);
  return value;
}

/** A whole number in 0..max. */
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

export function lockName(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) fail('name', 'a non-empty string', value);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_NAME_BYTES) {
    throw new InvalidArgumentError(
      `Expected \`name\` to be at most ${MAX_NAME_BYTES} bytes, got ${bytes} bytes`,
    );
  }
  return value;
}

export function prefix(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || /[{}]/.test(value) || value.length > 128) {
    fail('prefix', 'a non-empty string of at most 128 characters without `{` or `}`', value);
  }
  return value;
}

export function signal(value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) fail('signal', 'an AbortSignal', value);
  return value;
}

export function optionsObject(what: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(what, 'an object', value);
  }
  return value as Record<string, unknown>;
}

export function fn(what: string, value: unknown): void {
  if (typeof value !== 'function') fail(what, 'a function', value);
}
