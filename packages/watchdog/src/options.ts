import { InvalidArgumentError, validate } from '@holdfast/core';

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
/** A watchdog's options with every default filled in (`watchdog.options`); see `WatchdogOptions`. */
export interface ResolvedWatchdogOptions {
  /** See `WatchdogOptions.timeoutMs`. */
  readonly timeoutMs: number;
  /** See `WatchdogOptions.renewIntervalMs`. */
  readonly renewIntervalMs: number;
  /** See `WatchdogOptions.retryDelayMs`. */
  readonly retryDelayMs: number;
}

export function resolveWatchdogOptions(options: unknown): ResolvedWatchdogOptions {
  const o = validate.optionsObject('options', options) as WatchdogOptions;
  const timeoutMs = validate.positiveInteger('timeoutMs', o.timeoutMs ?? 30_000);
  // Renewal needs room for at least one interval shorter than the lease.
  if (timeoutMs < 2) throw new InvalidArgumentError(`Expected \`timeoutMs\` to be at least 2, got \`${timeoutMs}\``);
  const renewIntervalMs = validate.positiveInteger(
    'renewIntervalMs',
    o.renewIntervalMs ?? Math.max(1, Math.floor(timeoutMs / 3)),
  );
  if (renewIntervalMs >= timeoutMs) {
    throw new InvalidArgumentError(
      `Expected \`renewIntervalMs\` to be less than \`timeoutMs\` (${timeoutMs}), got \`${renewIntervalMs}\``,
    );
  }
  const retryDelayMs = validate.positiveInteger(
    'retryDelayMs',
    o.retryDelayMs ?? Math.max(1, Math.min(1_000, Math.floor(renewIntervalMs / 4))),
  );
  return { timeoutMs, renewIntervalMs, retryDelayMs: Math.min(retryDelayMs, renewIntervalMs) };
}
