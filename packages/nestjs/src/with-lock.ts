import { InvalidArgumentError, validate, type Lease } from '@holdfast/core';
import { leaseParameter } from './lock-lease.js';
import { wrapMethod } from './method-wrapper.js';

/**
 * The lock of a `@WithLock` method: a fixed name, or a function of the
 * method's arguments (as the caller passed them) returning the name.
 */
export type LockNameOf<Args extends unknown[] = any[]> = string | ((...args: Args) => string);

/** Options of `@WithLock`: those of `lock.withLock()` that make sense for every call. */
export interface WithLockDecoratorOptions {
  /**
   * Longest wait for the lock in ms; the call then rejects with `LockTimeoutError`.
   * @default wait until acquired
   */
  readonly waitMs?: number;
  /**
   * Lease in ms.
   * @default the module's `leaseMs` (or, with `watchdog`, the watchdog's `timeoutMs`, renewed while the method runs)
   */
  readonly leaseMs?: number;
}

/**
 * Runs the method inside `lock(name).withLock()` of the module's `LockClient`,
 * so its lock is `<prefix>`'s lock `name` (the module's `prefix`, as for any
 * `LockClient` lock), and:
 *
 * - calls on every instance of the application, in every process, exclude
 *   each other;
 * - a decorated method called from inside another one holding the same name
 *   (the same async call chain) re-enters instead of waiting for itself;
 * - the parameter marked `@LockLease()` receives the lease.
 *
 * The decorated method returns a promise, and rejects with holdfast's typed
 * errors: `LockTimeoutError` after `waitMs`, `LockLostError` when the lease
 * was lost while it ran, `ClientClosedError` once the application has shut
 * down, `InvalidArgumentError` for a bad name or options. The class must be a
 * provider or controller of an application that imports `HoldfastModule`.
 */
export function WithLock<Args extends unknown[] = any[]>(name: LockNameOf<Args>, options?: WithLockDecoratorOptions): MethodDecorator {
  if (typeof name !== 'function') validate.lockName(name);
  const o = validate.optionsObject('options', options) as WithLockDecoratorOptions;
  const lockOptions = {
    waitMs: validate.isDefault(o.waitMs) ? undefined : validate.positiveInteger('waitMs', o.waitMs),
    leaseMs: validate.isDefault(o.leaseMs) ? undefined : validate.positiveInteger('leaseMs', o.leaseMs),
  };
  return ((target: object, key: string | symbol, descriptor: PropertyDescriptor) =>
    wrapMethod('@WithLock', target, key, descriptor, async (locks, self, args, original) => {
      const lockName = typeof name === 'function' ? name(...(args as Args)) : name;
      if (typeof lockName !== 'string') {
        throw new InvalidArgumentError(`Expected the name function of \`@WithLock\` to return a string, got \`${typeof lockName}\``);
      }
      const index = leaseParameter(target, key);
      return locks.lock(lockName).withLock((lease: Lease) => {
        if (index !== undefined) args[index] = lease;
        return original.apply(self, args);
      }, lockOptions);
    })) as MethodDecorator;
}
