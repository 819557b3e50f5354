import { InvalidArgumentError, type EvictionCheck } from '@holdfast/core';
import { validate } from '@holdfast/core/internal';

/** Options of `new Redlock(instances, options)`. */
export interface RedlockOptions {
  /**
   * Prepended to every key and channel, on every instance. No `{` or `}`.
   * @default 'holdfast'
   */
  readonly prefix?: string;
  /**
   * Lease of an acquisition that names none, in ms. Under a watchdog,
   * acquisitions without `leaseMs` use the watchdog's `timeoutMs` instead.
   * @default 30_000
   */
  readonly leaseMs?: number;
  /**
   * Share of the lease kept back for clock drift between this process and the
   * instances: validity = lease − elapsed − (`leaseMs × driftFactor` + 2 ms).
   * @default 0.01
   */
  readonly driftFactor?: number;
  /**
   * Longest wait for one instance's answer during acquire, re-entry, release,
   * extend and renewal, in ms. Keep it small next to the lease: it bounds how
   * much a dead or hung minority can slow anything down.
   * @default 50
   */
  readonly instanceTimeoutMs?: number;
  /**
   * Base of the jittered exponential backoff between attempts when no pub/sub
   * wake-up arrives (unreachable majority, missed message, split vote), in ms.
   * @default 100
   */
  readonly retryDelayMs?: number;
  /**
   * Consecutive attempts that fail to reach a majority before `acquire()`
   * without `waitMs` gives up with `QuorumError`. With `waitMs`, attempts go on
   * until it runs out. Also the retry budget of background cleanup calls.
   * @default 3
   */
  readonly retries?: number;
  /**
   * Longest wait for a reply to calls off the quorum path: inspection
   * (`isLocked`, `remainingTtlMs`, `currentToken`), `forceRelease`, pub/sub
   * subscriptions and background cleanup, in ms.
   * @default 5_000
   */
  readonly commandTimeoutMs?: number;
  /**
   * How long a lock channel stays subscribed on each instance after its last
   * waiter left, in ms.
   * @default 10_000
   */
  readonly subscriptionLingerMs?: number;
  /**
   * What to do when an instance evicts keys (see core's `evictionCheck`):
   * checked on every instance before the first acquisition.
   * @default 'refuse'
   */
  readonly evictionCheck?: EvictionCheck;
}

/** A Redlock's options with every default filled in (`redlock.options`); see `RedlockOptions`. */
export interface ResolvedRedlockOptions {
  /** See `RedlockOptions.prefix`. */
  readonly prefix: string;
  /** See `RedlockOptions.leaseMs`. */
  readonly leaseMs: number;
  /** See `RedlockOptions.driftFactor`. */
  readonly driftFactor: number;
  /** See `RedlockOptions.instanceTimeoutMs`. */
  readonly instanceTimeoutMs: number;
  /** See `RedlockOptions.retryDelayMs`. */
  readonly retryDelayMs: number;
  /** See `RedlockOptions.retries`. */
  readonly retries: number;
  /** See `RedlockOptions.commandTimeoutMs`. */
  readonly commandTimeoutMs: number;
  /** See `RedlockOptions.subscriptionLingerMs`. */
  readonly subscriptionLingerMs: number;
  /** See `RedlockOptions.evictionCheck`. */
  readonly evictionCheck: EvictionCheck;
}

export function resolveRedlockOptions(options: unknown): ResolvedRedlockOptions {
  const o = validate.optionsObject('options', options) as RedlockOptions;
  const resolved: ResolvedRedlockOptions = {
    prefix: validate.prefix(o.prefix ?? 'holdfast'),
    leaseMs: validate.positiveInteger('leaseMs', o.leaseMs ?? 30_000),
    driftFactor: validate.numberInRange('driftFactor', o.driftFactor ?? 0.01, 0, 0.5),
    instanceTimeoutMs: validate.positiveInteger('instanceTimeoutMs', o.instanceTimeoutMs ?? 50),
    retryDelayMs: validate.positiveInteger('retryDelayMs', o.retryDelayMs ?? 100),
    retries: validate.nonNegativeInteger('retries', o.retries ?? 3, 100),
    commandTimeoutMs: validate.positiveInteger('commandTimeoutMs', o.commandTimeoutMs ?? 5_000),
    subscriptionLingerMs: validate.nonNegativeInteger('subscriptionLingerMs', o.subscriptionLingerMs ?? 10_000),
    evictionCheck: validate.oneOf('evictionCheck', o.evictionCheck ?? 'refuse', ['refuse', 'warn', 'off'] as const),
  };
  checkLease(resolved.leaseMs, resolved.instanceTimeoutMs);
  return resolved;
}

/**
 * A lease is only handed out with at least `instanceTimeoutMs` of validity
 * left (see quorum.ts), so a shorter lease could never be acquired.
 */
export function checkLease(leaseMs: number, instanceTimeoutMs: number): number {
  if (leaseMs <= instanceTimeoutMs) {
    throw new InvalidArgumentError(
      `Expected \`leaseMs\` to be greater than \`instanceTimeoutMs\` (${instanceTimeoutMs}), got \`${leaseMs}\``,
    );
  }
  return leaseMs;
}
