import { InvalidArgumentError } from '@holdfast/core';
import { methodLabel } from './method-wrapper.js';

/** For each prototype, the parameter of each method that receives the lease. */
const leaseParameters = new WeakMap<object, Map<string | symbol, number>>();

/**
 * Marks the parameter of a `@WithLock` method that receives the lease of the
 * lock it runs under (its `token` for fenced writes, its `signal` to stop when
 * the lease is lost), or of a `@RunOnce` method that receives its claim
 * (`RunOnceClaim`: `key`, `token`, `signal`). Callers leave it out; declare it
 * last and optional:
 *
 * ```ts
 * @WithLock((id: string) => `invoice:${id}`)
 * async pay(id: string, @LockLease() lease?: Lease) {}
 * ```
 */
export function LockLease(): ParameterDecorator {
  return (target, key, index) => {
    if (key === undefined) {
      throw new InvalidArgumentError('Expected `@LockLease()` on a method parameter, got a constructor parameter');
    }
    let methods = leaseParameters.get(target);
    if (!methods) leaseParameters.set(target, (methods = new Map()));
    const taken = methods.get(key);
    if (taken !== undefined && taken !== index) {
      throw new InvalidArgumentError(
        `Expected one \`@LockLease()\` parameter on \`${methodLabel(target, key)}\`, got parameters ${Math.min(taken, index)} and ${Math.max(taken, index)}`,
      );
    }
    methods.set(key, index);
  };
}

/** The index of the `@LockLease()` parameter of `target[key]`, if it has one. */
export function leaseParameter(target: object, key: string | symbol): number | undefined {
  return leaseParameters.get(target)?.get(key);
}
