import { InvalidArgumentError } from '../errors/errors.js';
import { resolveAcquireOptions, type AcquireOptions, type ResolvedAcquireOptions, type TryAcquireOptions } from '../options/options.js';
import * as v from '../options/validate.js';

/** The largest permit count a semaphore accepts. */
export const MAX_PERMITS = 1_000_000_000;

/** Options of `client.semaphore(name, options)`. */
export interface SemaphoreOptions {
  /**
   * How many permits may be held at once. Stored with the semaphore in Redis
   * by its first use; a client given another count gets
   * `PermitCountMismatchError` until the count is changed with `setPermits()`.
   * Required: there is no default.
   */
  readonly permits: number;
}

/** Options of `semaphore.acquire()` and `semaphore.withLock()`. */
export interface PermitAcquireOptions extends AcquireOptions {
  /** Permits to take at once, from 1 to the semaphore's count. @default 1 */
  readonly permits?: number;
}

/** Options of `semaphore.tryAcquire()`. */
export interface PermitTryAcquireOptions extends TryAcquireOptions {
  /** Permits to take at once, from 1 to the semaphore's count. @default 1 */
  readonly permits?: number;
}

/** The permit count of `client.semaphore()`. */
export function resolveSemaphoreOptions(options: unknown): { permits: number } {
  if (v.isDefault(options)) throw new InvalidArgumentError('Expected `options` to be an object with `permits`, got `undefined`');
  const o = v.optionsObject('options', options) as Partial<SemaphoreOptions>;
  return { permits: v.positiveInteger('permits', o.permits, MAX_PERMITS) };
}

/** Acquisition options, with `permits` checked against the semaphore's count. */
export function resolvePermitOptions(options: unknown, count: number): ResolvedAcquireOptions & { permits: number } {
  const o = v.optionsObject('options', options) as PermitAcquireOptions;
  const permits = v.isDefault(o.permits) ? 1 : v.positiveInteger('permits', o.permits, count);
  return { ...resolveAcquireOptions(options), permits };
}
