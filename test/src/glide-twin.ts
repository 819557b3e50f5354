import type { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { glidePackage, type GlideConfig } from './glide-client.mjs';

export { glideConfig } from './glide-client.mjs';
export type { GlideAddress, GlideConfig } from './glide-client.mjs';

/**
 * The GLIDE pass (HOLDFAST_CLIENT=glide): the same suites, with holdfast
 * running on Valkey GLIDE 2.x clients (`GlideClient`, `GlideClusterClient`).
 *
 * As in the node-redis pass (node-redis-twin.ts), every client the harness
 * creates is a twin: an ioredis client for the test's own commands
 * (`redis.hgetall(...)`, `redis.call(...)`), and a GLIDE client to the same
 * server, options translated, which holdfast detects (its `customCommand`)
 * and runs on. GLIDE makes its clients asynchronously (`createClient`) and the
 * harness hands out clients synchronously: the GLIDE members of a twin wait
 * for the client being made and call it. holdfast sees what it sees of a real
 * one: the methods, `config`, `requestTimeout`, `isClosed` and its
 * `constructor` (GLIDE's class, which holdfast's subscriber client is made
 * with). The GLIDE side is made when holdfast first looks at the client, so
 * admin clients never open one. Closing the twin closes both.
 */

/** What a test observes of a twin's GLIDE side: every call's rejection, as GLIDE gave it. */
export interface GlideProbe {
  readonly rejections: Error[];
}

const probes = new WeakMap<object, GlideProbe>();

/** The rejections a twin's GLIDE calls met (GLIDE's own errors, before holdfast maps them). */
export function glideProbe(client: object): GlideProbe {
  const probe = probes.get(client);
  if (!probe) throw new Error('not a GLIDE twin of the harness');
  return probe;
}

/** GLIDE's members holdfast reads, served by the GLIDE side (`ssubscribe` and `sunsubscribe*` on a Cluster client only). */
const DELEGATED = ['customCommand', 'exec', 'invokeScript', 'subscribe', 'unsubscribe', 'unsubscribeLazy', 'ssubscribe', 'sunsubscribe', 'sunsubscribeLazy'];

type GlideAny = GlideClient | GlideClusterClient;

/**
 * The twin of `io` (an ioredis client or Cluster for the test's own commands) whose GLIDE side,
 * a `GlideClient` or (`cluster`) a `GlideClusterClient` made from `config`, is what holdfast runs on.
 */
export function glideTwin<T extends object>(io: T, config: GlideConfig, cluster: boolean): T {
  const { GlideClient, GlideClusterClient } = glidePackage();
  const Class = cluster ? GlideClusterClient : GlideClient;
  const probe: GlideProbe = { rejections: [] };
  let made: Promise<GlideAny> | undefined;
  let real: GlideAny | undefined;
  let closed = false;
  const glideSide = (): Promise<GlideAny> => {
    if (!made) {
      made = (Class.createClient as (c: object) => Promise<GlideAny>)(config);
      made.then(
        (client) => {
          real = client;
          if (closed) client.close();
        },
        (error: unknown) => void probe.rejections.push(error as Error),
      );
    }
    return made;
  };
  const members = new Map<string, unknown>();
  for (const name of DELEGATED) {
    if (typeof (Class.prototype as unknown as Record<string, unknown>)[name] !== 'function') continue;
    members.set(name, (...args: unknown[]) =>
      glideSide()
        .then((client) => (client as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!(...args))
        .catch((error: unknown) => {
          probe.rejections.push(error as Error);
          throw error;
        }),
    );
  }
  const closeGlide = () => {
    closed = true;
    real?.close();
  };
  members.set('close', closeGlide);
  const ioSide = io as Record<string | symbol, any>;
  const twin = new Proxy(io, {
    get(target, prop) {
      if (typeof prop === 'string') {
        if (members.has(prop)) {
          // Made as soon as holdfast looks at it: an application hands holdfast a connected client.
          glideSide().catch(() => undefined);
          return members.get(prop);
        }
        // GLIDE's names the client has not (a standalone client's sharded pub/sub): not ioredis's either.
        if (DELEGATED.includes(prop)) return undefined;
        if (prop === 'constructor') return Class;
        // ioredis's `config()` command, carrying GLIDE's configuration as its own properties: the
        // test's `redis.config('SET', …)` works, and holdfast reads (and spreads) GLIDE's fields.
        if (prop === 'config') return Object.assign((...args: unknown[]) => ioSide.config(...args), config);
        if (prop === 'requestTimeout') return config.requestTimeout ?? 250;
        if (prop === 'isClosed') return closed || (real as unknown as { isClosed?: boolean } | undefined)?.isClosed === true;
        if (prop === 'status') {
          // Tests wait for `status === 'ready'` to mean "the client holdfast runs on is connected".
          const status = ioSide.status as string;
          return status === 'ready' && made && !real ? 'connect' : status;
        }
        if (prop === 'disconnect' || prop === 'quit') {
          return (...args: unknown[]) => {
            closeGlide();
            return ioSide[prop](...args);
          };
        }
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    has(target, prop) {
      if (typeof prop === 'string' && DELEGATED.includes(prop)) return members.has(prop);
      return Reflect.has(target, prop);
    },
  });
  probes.set(twin, probe);
  return twin;
}
