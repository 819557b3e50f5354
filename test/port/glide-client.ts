import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import type { Redis, RedisOptions } from 'ioredis';

/**
 * GLIDE clients for the port contract. The contract's fixtures hand out
 * clients synchronously, in ioredis's options (`client({ db: 3 })`), and
 * GLIDE makes its clients asynchronously (`createClient`): a GLIDE client
 * here is a stand-in of GLIDE's own class (its `constructor`, which holdfast's
 * subscriber is made with, is GLIDE's) whose methods wait for the real client
 * and call it. `disconnect()` closes it, as the contract closes its clients.
 * holdfast sees what it sees of a real one: the methods, `config`,
 * `requestTimeout` and `isClosed`.
 */

// GLIDE logs every error reply at WARN on stdout; the contract provokes many.
Logger.setLoggerConfig('off');

/** One address of the server or Cluster node the client connects to. */
export interface GlideAddress {
  readonly host: string;
  readonly port: number;
}

/** What a test observes of a stand-in: every call's rejection, as GLIDE gave it. */
export interface GlideProbe {
  readonly rejections: Error[];
}

const probes = new WeakMap<object, GlideProbe>();

/** The rejections a stand-in's calls met (GLIDE's own errors, before holdfast maps them). */
export function probeOf(client: object): GlideProbe {
  return probes.get(client)!;
}

/** GLIDE's configuration for ioredis-style options (host/port, db, username/password, lazyConnect; others have no GLIDE equivalent). */
export function glideConfig(address: GlideAddress, options: RedisOptions & { requestTimeout?: number } = {}) {
  return {
    addresses: [{ host: options.host ?? address.host, port: options.port ?? address.port }],
    ...(options.db === undefined ? {} : { databaseId: options.db }),
    ...(options.username === undefined ? {} : { credentials: { username: options.username, password: options.password ?? '' } }),
    ...(options.lazyConnect ? { lazyConnect: true } : {}),
    ...(options.requestTimeout === undefined ? {} : { requestTimeout: options.requestTimeout }),
  };
}

const DELEGATED = ['customCommand', 'exec', 'invokeScript', 'subscribe', 'unsubscribe', 'unsubscribeLazy', 'ssubscribe', 'sunsubscribe', 'sunsubscribeLazy'];

/** A GLIDE client (`cluster`: a GlideClusterClient) made from `config`, typed as the ioredis client the contract is written against. */
export function glideStandIn(config: ReturnType<typeof glideConfig>, cluster: boolean, opened: (() => void)[]): Redis {
  const Class = cluster ? GlideClusterClient : GlideClient;
  const made = (Class.createClient as (c: object) => Promise<GlideClient | GlideClusterClient>)(config);
  made.catch(() => undefined);
  let real: GlideClient | GlideClusterClient | undefined;
  let closed = false;
  made.then((client) => {
    real = client;
    if (closed) client.close();
  }, () => undefined);
  const probe: GlideProbe = { rejections: [] };
  const standIn = Object.create(Class.prototype) as Record<string, unknown>;
  for (const name of DELEGATED) {
    if (typeof (Class.prototype as unknown as Record<string, unknown>)[name] !== 'function') continue;
    standIn[name] = (...args: unknown[]) =>
      made
        .then((client) => (client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!(...args))
        .catch((error: unknown) => {
          probe.rejections.push(error as Error);
          throw error;
        });
  }
  const close = () => {
    closed = true;
    real?.close();
  };
  Object.defineProperties(standIn, {
    config: { get: () => config },
    requestTimeout: { get: () => (config as { requestTimeout?: number }).requestTimeout ?? 250 },
    isClosed: { get: () => closed || (real as unknown as { isClosed?: boolean } | undefined)?.isClosed === true },
    close: { value: close },
    disconnect: { value: close },
    quit: { value: async () => close() },
    listenerCount: { value: () => 0 },
  });
  probes.set(standIn, probe);
  opened.push(close);
  return standIn as unknown as Redis;
}
