// The public face of @holdfast/nestjs.
export { HoldfastModule } from './holdfast-module.js';
export type { HoldfastClient, HoldfastClientOptions, HoldfastModuleOptions, HoldfastModuleAsyncOptions } from './options.js';
export { WithLock } from './with-lock.js';
export type { LockNameOf, WithLockDecoratorOptions } from './with-lock.js';
export { LockLease } from './lock-lease.js';
export { RunOnce } from './run-once.js';
export type { RunOnceDecoratorOptions } from './run-once.js';
export { LockTimeoutFilter } from './lock-timeout-filter.js';
export type { LockTimeoutFilterOptions } from './lock-timeout-filter.js';
export { Idempotent, IdempotentInterceptor } from './idempotent.js';
export type { IdempotentOptions } from './idempotent.js';
