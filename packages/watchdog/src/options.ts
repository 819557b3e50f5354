import { InvalidArgumentError, MAX_DURATION_MS } from '@holdfast/core';

/** Options of `new Watchdog(locks, options)`. */
export interface WatchdogOptions {
  /**
   * The lease, in ms, given to every acquisition that names no `leaseMs`
   * through the watched client, and set again by every renewal. It bounds how
   * long a lock stays blocked after this process dies or stops renewing.
   * @default 30_000
   */
  readonly timeoutMs?: number;
  /**
   * Time between two renewal ticks, in ms. Must be less than `timeoutMs`; the
   * default leaves two more attempts before a lease runs out.
   * @default Math.floor(timeoutMs / 3)
   */
  readonly renewIntervalMs?: number;
  /**
   * Time before the next tick after a tick in which some renewal failed
   * (Redis unreachable, timeout), in ms. Capped at `renewIntervalMs`.
   * @default Math.min(1_000, Math.floor(renewIntervalMs / 4)), at least 1
   */
  readonly retryDelayMs?: number;
}

/** Options with every default filled in. */
export interface ResolvedWatchdogOptions {
  readonly timeoutMs: number;
  readonly renewIntervalMs: number;
  readonly retryDelayMs: number;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol' || typeof value === 'function') return typeof value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function fail(what: string, expected: string, value: unknown): never {
  throw new InvalidArgumentError(`Expected \`${what}\` to be ${expected}, got \`${show(value)}\``);
}

function positiveInteger(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    fail(what, 'a positive integer', value);
  }
  if (value > MAX_DURATION_MS) fail(what, `at most ${MAX_DURATION_MS}`, value);
  return value;
}

export function resolveWatchdogOptions(options: unknown): ResolvedWatchdogOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    fail('options', 'an object', options);
  }
  const o = (options ?? {}) as WatchdogOptions;
  const timeoutMs = positiveInteger('timeoutMs', o.timeoutMs ?? 30_000);
  if (timeoutMs < 2) fail('timeoutMs', 'at least 2', timeoutMs);
  const renewIntervalMs = positiveInteger('renewIntervalMs', o.renewIntervalMs ?? Math.max(1, Math.floor(timeoutMs / 3)));
  if (renewIntervalMs >= timeoutMs) {
    fail('renewIntervalMs', `less than \`timeoutMs\` (${timeoutMs})`, renewIntervalMs);
  }
  const retryDelayMs = positiveInteger(
    'retryDelayMs',
    o.retryDelayMs ?? Math.max(1, Math.min(1_000, Math.floor(renewIntervalMs / 4))),
  );
  return { timeoutMs, renewIntervalMs, retryDelayMs: Math.min(retryDelayMs, renewIntervalMs) };
}
