import { InvalidArgumentError, LockClient, validate, type LockClientOptions, type RedisLike } from '@holdfast/core';
import { Watchdog, type WatchdogOptions } from '@holdfast/watchdog';
import { Logger } from '@nestjs/common';
import type { HoldfastClientOptions } from './options.js';
import { closeOwnedClient } from './owned-client.js';

/** What one HoldfastModule runs: the lock client, its watchdog, and the Redis client when the module owns it. */
export interface HoldfastRuntime {
  readonly locks: LockClient;
  readonly watchdog: Watchdog | undefined;
  /** The client the module made through the user's factory (closed on shutdown); undefined for the user's own. */
  readonly owned: RedisLike | undefined;
  readonly releaseOnShutdown: boolean;
  /** Set by the first shutdown: later calls wait for the same one. */
  stopping?: Promise<void>;
}

/** Builds the runtime; a module-owned client is closed again when anything after its creation fails. */
export async function createRuntime(
  options: HoldfastClientOptions,
  watchdog: boolean | WatchdogOptions | undefined,
): Promise<HoldfastRuntime> {
  const o = validate.optionsObject('options', options) as unknown as HoldfastClientOptions;
  const { client, releaseOnShutdown, ...clientOptions } = o;
  if (typeof client !== 'function' && (typeof client !== 'object' || client === null)) {
    throw new InvalidArgumentError(
      `Expected \`client\` to be a Redis client or a function returning one, got \`${client === null ? 'null' : typeof client}\``,
    );
  }
  const release = validate.isDefault(releaseOnShutdown) ? true : validate.boolean('releaseOnShutdown', releaseOnShutdown);
  const dogOptions = watchdogOptions(watchdog);
  const owned = typeof client === 'function' ? await client() : undefined;
  try {
    const locks = new LockClient(owned ?? (client as RedisLike), clientOptions as LockClientOptions);
    locks.on('error', (error) => logError('LockClient', error));
    let dog: Watchdog | undefined;
    try {
      dog = dogOptions === undefined ? undefined : new Watchdog(locks, dogOptions);
    } catch (error) {
      await locks.close();
      throw error;
    }
    dog?.on('error', (error) => logError('Watchdog', error));
    return { locks, watchdog: dog, owned, releaseOnShutdown: release };
  } catch (error) {
    if (owned !== undefined) await closeOwnedClient(owned);
    throw error;
  }
}

/**
 * Where the module's `LockClient` and `Watchdog` report background failures
 * (a release at shutdown that Redis never answered, a listener that threw):
 * the application's logger, under this context, not a process warning.
 */
const logger = new Logger('HoldfastModule');

function logError(source: 'LockClient' | 'Watchdog', error: unknown): void {
  if (error instanceof Error) logger.error(`${source} error: ${error.name}: ${error.message}`, error.stack);
  else logger.error(`${source} error: ${String(error)}`);
}

/** `false`/absent: no watchdog; `true`: the defaults; an object: those options. */
export function watchdogOptions(value: unknown): WatchdogOptions | undefined {
  if (validate.isDefault(value) || value === false) return undefined;
  if (value === true) return {};
  return validate.optionsObject('watchdog', value) as WatchdogOptions;
}

/**
 * Stops the watchdog, closes the lock client (freeing held locks unless told
 * not to), then closes a module-owned Redis client: in that order, so the
 * releases still have a connection. Runs once, however often it is called.
 */
export function stopRuntime(runtime: HoldfastRuntime): Promise<void> {
  runtime.stopping ??= (async () => {
    await runtime.watchdog?.stop();
    await runtime.locks.close({ release: runtime.releaseOnShutdown });
    if (runtime.owned !== undefined) await closeOwnedClient(runtime.owned);
  })();
  return runtime.stopping;
}
