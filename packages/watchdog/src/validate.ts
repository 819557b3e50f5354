import { InvalidArgumentError, MAX_DURATION_MS } from '@holdfast/core';

// The watchdog's option checks, in the phrasing every holdfast package uses
// (`Expected \`x\` to be …, got \`…\``): its own, so it needs core's public API only.

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

/** A whole number of milliseconds in 1..MAX_DURATION_MS. */
export function positiveInteger(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) fail(what, 'a positive integer', value);
  if (value > MAX_DURATION_MS) fail(what, `at most ${MAX_DURATION_MS}`, value);
  return value;
}

/** An options object; `undefined` and `null` mean "every default". */
export function optionsObject(what: string, value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) fail(what, 'an object', value);
  return value as Record<string, unknown>;
}
