import type { RedisPort, ServerCheck } from '@holdfast/core/internal';
import { DistinctServers } from './distinct-servers.js';
import { firstConnections } from './instances.js';

/**
 * What every new acquisition waits for first: the first connections of
 * clients without an offline queue (see firstConnections), each instance's
 * eviction check, and instances that are distinct servers. Once all of it
 * passed, `ready()` answers synchronously: no promise per acquisition.
 */
export class Readiness {
  readonly #instances: readonly RedisPort[];
  readonly #commandTimeoutMs: number;
  readonly #checks: readonly ServerCheck[];
  readonly #distinct: DistinctServers;
  #connecting: Promise<void> | undefined;
  /** Set once #connecting resolved. */
  #connected = false;

  constructor(instances: readonly RedisPort[], commandTimeoutMs: number, checks: readonly ServerCheck[]) {
    this.#instances = instances;
    this.#commandTimeoutMs = commandTimeoutMs;
    this.#checks = checks;
    this.#distinct = new DistinctServers(checks);
  }

  /** Undefined when every instance is ready now (throws when two are one server); else a promise of that. */
  ready(): Promise<void> | undefined {
    if (this.#connected && this.#pendingChecks() === undefined) {
      this.#distinct.assert();
      return undefined;
    }
    return this.#readyNow();
  }

  async #readyNow(): Promise<void> {
    this.#connecting ??= firstConnections(this.#instances, this.#commandTimeoutMs).then(() => {
      this.#connected = true;
    });
    await this.#connecting;
    const checks = this.#pendingChecks();
    if (checks !== undefined) await Promise.all(checks);
    this.#distinct.assert();
  }

  #pendingChecks(): Promise<void>[] | undefined {
    let checks: Promise<void>[] | undefined;
    for (const check of this.#checks) {
      const ready = check.ready();
      if (ready !== undefined) (checks ??= []).push(ready);
    }
    return checks;
  }
}
