import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { Inject, Injectable, Module, type DynamicModule, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import type { HoldfastClientOptions, HoldfastModuleAsyncOptions, HoldfastModuleOptions } from './options.js';
import { createRuntime, stopRuntime, watchdogOptions, type HoldfastRuntime } from './runtime.js';

/** The module's runtime (lock client, watchdog, owned Redis client): internal to this package. */
const HOLDFAST_RUNTIME = Symbol('holdfast:runtime');
/** The client options, as given to forRoot or made by forRootAsync's factory. */
const HOLDFAST_OPTIONS = Symbol('holdfast:options');

/**
 * Ends the runtime when the application shuts down. On `onApplicationShutdown`,
 * Nest's last hook: an HTTP server has stopped taking requests by then, so no
 * new `@WithLock` section starts while the client closes.
 */
@Injectable()
class HoldfastShutdown implements OnApplicationShutdown {
  constructor(@Inject(HOLDFAST_RUNTIME) private readonly runtime: HoldfastRuntime) {}

  onApplicationShutdown(): Promise<void> {
    return stopRuntime(this.runtime);
  }
}

function providers(options: Provider, watchdog: unknown): Provider[] {
  const dogOptions = watchdogOptions(watchdog);
  return [
    options,
    {
      provide: HOLDFAST_RUNTIME,
      useFactory: (o: HoldfastClientOptions) => createRuntime(o, dogOptions),
      inject: [HOLDFAST_OPTIONS],
    },
    { provide: LockClient, useFactory: (runtime: HoldfastRuntime) => runtime.locks, inject: [HOLDFAST_RUNTIME] },
    ...(dogOptions === undefined
      ? []
      : [{ provide: Watchdog, useFactory: (runtime: HoldfastRuntime) => runtime.watchdog, inject: [HOLDFAST_RUNTIME] }]),
    HoldfastShutdown,
  ];
}

/**
 * holdfast for NestJS: a global module providing one `LockClient` (and, with
 * `watchdog`, one `Watchdog`) to the whole application, which `@WithLock`
 * methods lock through. Import it once, in the root module. On application
 * shutdown it stops the watchdog, closes the `LockClient` and closes the Redis
 * client if it made it.
 */
@Module({})
export class HoldfastModule {
  /**
   * The module with options known up front:
   * `HoldfastModule.forRoot({ client: () => new Redis(url), prefix: 'app', watchdog: true })`.
   */
  static forRoot(options: HoldfastModuleOptions): DynamicModule {
    const { watchdog, ...clientOptions } = options ?? ({} as HoldfastModuleOptions);
    const exported = watchdogOptions(watchdog) === undefined ? [LockClient] : [LockClient, Watchdog];
    return {
      module: HoldfastModule,
      global: true,
      providers: providers({ provide: HOLDFAST_OPTIONS, useValue: clientOptions }, watchdog),
      exports: exported,
    };
  }

  /**
   * The module with options made by a factory, from injected providers:
   * `HoldfastModule.forRootAsync({ inject: [ConfigService], useFactory: (config) => ({ client: … }) })`.
   */
  static forRootAsync(options: HoldfastModuleAsyncOptions): DynamicModule {
    const exported = watchdogOptions(options.watchdog) === undefined ? [LockClient] : [LockClient, Watchdog];
    return {
      module: HoldfastModule,
      global: true,
      imports: options.imports ?? [],
      providers: providers(
        { provide: HOLDFAST_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] },
        options.watchdog,
      ),
      exports: exported,
    };
  }
}
