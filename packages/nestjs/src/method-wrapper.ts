import { InvalidArgumentError, LockClient } from '@holdfast/core';
import { Inject } from '@nestjs/common';

/**
 * The `LockClient` of an instance with locked methods, set by Nest's property
 * injection (one symbol, so it never clashes with the class's own fields).
 */
const LOCK_CLIENT = Symbol('holdfast:lockClient');

/** Prototypes already given the property injection: one per class is enough. */
const injected = new WeakSet<object>();

/** `Reflect` with reflect-metadata's API, which Nest loads before any decorator runs. */
interface MetadataReflect {
  getOwnMetadataKeys?(target: object): unknown[];
  getOwnMetadata?(key: unknown, target: object): unknown;
  defineMetadata?(key: unknown, value: unknown, target: object): void;
}

/** What a wrapped method does with each call: runs `original` on `self` with `args`, in its own way. */
export type MethodRun = (locks: LockClient, self: object, args: unknown[], original: (...args: unknown[]) => unknown) => Promise<unknown>;

/** `Class.method`, for messages (and `@RunOnce`'s default key): the target is the prototype, or the class of a static method. */
export function methodLabel(target: object, key: string | symbol): string {
  const owner = typeof target === 'function' ? target : (target as { constructor?: { name?: string } }).constructor;
  return `${owner?.name || 'anonymous'}.${String(key)}`;
}

/**
 * Replaces a method with one that runs it through `run` and the module's
 * `LockClient`. The building block of `@WithLock`, and of any later method
 * decorator of this package: each says only what happens around the call.
 *
 * Metadata other decorators put on the original function (`@Get`, `@Cron`,
 * `@SetMetadata`) is copied to the wrapper, so the order of decorators does
 * not matter to Nest.
 */
export function wrapMethod(
  decorator: string,
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor,
  run: MethodRun,
): PropertyDescriptor {
  const label = methodLabel(target, key);
  const original = descriptor.value as unknown;
  if (typeof original !== 'function') {
    throw new InvalidArgumentError(`Expected \`${label}\` to be a method for \`${decorator}\`, got \`${typeof original}\``);
  }
  if (typeof target === 'function') {
    throw new InvalidArgumentError(`Expected \`${label}\` to be an instance method for \`${decorator}\`, got a static method`);
  }
  if (!injected.has(target)) {
    injected.add(target);
    Inject(LockClient)(target, LOCK_CLIENT);
  }
  const method = original as (...args: unknown[]) => unknown;
  const wrapped = {
    // A named function expression keeps the method's name in stack traces.
    async [key](this: object, ...args: unknown[]): Promise<unknown> {
      const locks = (this as Record<symbol, LockClient | undefined>)?.[LOCK_CLIENT];
      if (locks === undefined) {
        throw new InvalidArgumentError(
          `Expected \`${label}\` to be called on an instance Nest created, in an application importing ` +
            `HoldfastModule, for \`${decorator}\`, got an instance without the module's LockClient`,
        );
      }
      return run(locks, this, args, method);
    },
  }[key as string]!;
  copyMetadata(method, wrapped);
  return { ...descriptor, value: wrapped };
}

function copyMetadata(from: object, to: object): void {
  const reflect = Reflect as unknown as MetadataReflect;
  if (!reflect.getOwnMetadataKeys || !reflect.getOwnMetadata || !reflect.defineMetadata) return;
  for (const metadataKey of reflect.getOwnMetadataKeys(from)) {
    reflect.defineMetadata(metadataKey, reflect.getOwnMetadata(metadataKey, from), to);
  }
}
