import { InvalidArgumentError, MAX_DURATION_MS, MAX_NAME_BYTES, validate, type RunOnceClaim } from '@holdfast/core';
import { cronMetadata, loadCronTime } from './cron-loader.js';
import { cronSchedule, cronSlot, type CronSchedule, type CronSlot } from './cron-slot.js';
import { leaseParameter } from './lock-lease.js';
import { methodLabel, wrapMethod } from './method-wrapper.js';

/** Options of `@RunOnce`. */
export interface RunOnceDecoratorOptions {
  /**
   * How long a firing's key stays claimed, in ms from the claim (and for as
   * long as the method runs: core's `runOnce` renews it). Every instance that
   * fires while it lasts skips, so it must cover the latest an instance may
   * fire after the others.
   * @default the method's interval: from the firing's tick to the next one (so the key stays claimed at least until the next tick; at most ~24.8 days); for a `@Cron(date)` method, the module's `leaseMs`
   */
  readonly ttlMs?: number;
}

/** What a firing adds to the key a user gives: `:<tick as ISO 8601>`, 25 bytes. */
const SLOT_SUFFIX_BYTES = ':0000-00-00T00:00:00.000Z'.length;

/**
 * Runs a `@Cron` method of `@nestjs/schedule` once per firing across every
 * instance of the application: each firing calls core's
 * `lockClient.runOnce(key, …)`, and only the instance that claims the key
 * runs the method; the others resolve without running it.
 *
 * A firing is the method's scheduled time slot: its cron tick at or before
 * the call (from the method's `@Cron` expression, `timeZone` or `utcOffset`,
 * with the `cron` package that `@nestjs/schedule` schedules with). An
 * instance firing late, anywhere before the next tick, belongs to the same
 * firing and skips.
 *
 * The key is `<key>:<tick as ISO 8601>`, under the module's `prefix`; `key`
 * defaults to `Class.method` (give one when a bundler renames classes, or to
 * keep the key when renaming the class). A parameter marked `@LockLease()`
 * receives the claim (`RunOnceClaim`: `key`, `token`, `signal`).
 *
 * The decorated method returns a promise of its result where it ran, and of
 * `undefined` where another instance had the firing. It rejects with the
 * method's own error, `ClientClosedError` after shutdown, and
 * `InvalidArgumentError` for misuse: a method without `@Cron` (or a schedule
 * cron rejects), a missing `cron` package (checked at the first call, since
 * decorators apply in either order), a bad key or options (thrown when the
 * class is defined).
 *
 * ```ts
 * @Cron('0 * * * *')
 * @RunOnce()
 * async hourly() {}
 * ```
 */
export function RunOnce(key?: string, options?: RunOnceDecoratorOptions): MethodDecorator {
  if (!validate.isDefault(key)) {
    validate.lockName(key);
    const bytes = Buffer.byteLength(key, 'utf8');
    if (bytes + SLOT_SUFFIX_BYTES > MAX_NAME_BYTES) {
      throw new InvalidArgumentError(
        `Expected \`key\` to be at most ${MAX_NAME_BYTES - SLOT_SUFFIX_BYTES} bytes (the firing's time is added to it), got ${bytes} bytes`,
      );
    }
  }
  const o = validate.optionsObject('options', options) as RunOnceDecoratorOptions;
  const ttlMs = validate.isDefault(o.ttlMs) ? undefined : validate.positiveInteger('ttlMs', o.ttlMs);
  return ((target: object, method: string | symbol, descriptor: PropertyDescriptor) => {
    const label = methodLabel(target, method);
    const name = key ?? label;
    let schedule: CronSchedule | undefined;
    /** The latest firing's slot, where the next firing's search starts. */
    let last: CronSlot | undefined;
    const wrapped = wrapMethod('@RunOnce', target, method, descriptor, async (locks, self, args, original) => {
      schedule ??= cronSchedule(loadCronTime(), cronMetadata([wrapped.value, (self as Record<string | symbol, unknown>)[method]], label), label);
      const slot = cronSlot(schedule, Date.now(), last);
      last = slot;
      // Capped at the longest ttl core takes (~24.8 days): a monthly job's instances fire within seconds of each other.
      const interval = slot.next === undefined ? undefined : Math.min(slot.next.getTime() - slot.at.getTime(), MAX_DURATION_MS);
      const index = leaseParameter(target, method);
      const outcome = await locks.runOnce(
        `${name}:${slot.at.toISOString()}`,
        (claim: RunOnceClaim) => {
          if (index !== undefined) args[index] = claim;
          return original.apply(self, args);
        },
        { ttlMs: ttlMs ?? interval },
      );
      return outcome.ran ? outcome.result : undefined;
    });
    return wrapped;
  }) as MethodDecorator;
}
