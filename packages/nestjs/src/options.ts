import type { LockClientOptions, RedisLike } from '@holdfast/core';
import type { WatchdogOptions } from '@holdfast/watchdog';
import type { InjectionToken, ModuleMetadata, OptionalFactoryDependency } from '@nestjs/common';

/**
 * The Redis client holdfast locks through. An instance is the application's:
 * the module never closes it. A function is called once at start-up (it may
 * return a promise, such as node-redis's `createClient().connect()`), and the
 * client it returns is the module's: closed on shutdown, after the `LockClient`.
 */
export type HoldfastClient = RedisLike | (() => RedisLike | Promise<RedisLike>);

/**
 * What `HoldfastModule.forRoot()` takes, and what `forRootAsync()`'s factory
 * returns: the client, and the `LockClient` options (`prefix`, `leaseMs`, …),
 * which are core's, passed on as they are.
 */
export interface HoldfastClientOptions extends LockClientOptions {
  /** The Redis client, or a function making one (see `HoldfastClient` for who closes it). */
  readonly client: HoldfastClient;
  /**
   * On application shutdown, free the locks still held (`close({ release: true })`)
   * so that another instance can take them at once, instead of when their
   * leases run out. Sections still running then reject with `ClientClosedError`
   * either way.
   * @default true
   */
  readonly releaseOnShutdown?: boolean;
}

/** Options of `HoldfastModule.forRoot()`. */
export interface HoldfastModuleOptions extends HoldfastClientOptions {
  /**
   * `true` or watchdog options: a `Watchdog` watches the `LockClient` (acquisitions
   * without `leaseMs`, `@WithLock` ones included, are renewed while held) and is
   * injectable. Without it, `Watchdog` is not a provider.
   * @default false
   */
  readonly watchdog?: boolean | WatchdogOptions;
}

/**
 * Options of `HoldfastModule.forRootAsync()`: a factory for the client options
 * (with Nest's `inject` and `imports`, as in other modules' `forRootAsync`).
 * `watchdog` sits here, not in what the factory returns, because whether
 * `Watchdog` is a provider must be known before any factory runs.
 */
export interface HoldfastModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** Providers handed to `useFactory`, in order. @default [] */
  readonly inject?: (InjectionToken | OptionalFactoryDependency)[];
  /** Makes the client options from the injected providers; may be async. */
  readonly useFactory: (...args: any[]) => HoldfastClientOptions | Promise<HoldfastClientOptions>;
  /** As `HoldfastModuleOptions.watchdog`. @default false */
  readonly watchdog?: boolean | WatchdogOptions;
}
