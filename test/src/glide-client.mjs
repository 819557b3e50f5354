// The GLIDE clients of the GLIDE pass (HOLDFAST_CLIENT=glide), made from the ioredis options a
// test asked for. Plain JavaScript, so the processes the suite starts (chaos workers) make them
// the same way the harness does (test/src/glide-twin.ts).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

let loaded;
/** GLIDE's package, loaded on first use (its native binding stays out of the other passes). */
export function glidePackage() {
  if (!loaded) {
    loaded = require('@valkey/valkey-glide');
    // GLIDE logs every error reply at WARN on stdout; the suites provoke many.
    loaded.Logger.setLoggerConfig('off');
  }
  return loaded;
}

/** A redis:// URL's address, database and credentials. */
function parseUrl(url) {
  const parsed = new URL(url);
  return {
    address: { host: parsed.hostname, port: Number(parsed.port || 6379) },
    db: parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : undefined,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
  };
}

/**
 * GLIDE's configuration for what a test asked of ioredis: where (a redis:// URL, an address or a
 * Cluster's nodes; the options' host/port win), `db`, `username`/`password`, `lazyConnect`,
 * `connectTimeout`, and `commandTimeout` as GLIDE's `requestTimeout` (250 ms by default). Options
 * GLIDE has no counterpart for (`retryStrategy`: GLIDE reconnects for good; `enableOfflineQueue`,
 * `maxRetriesPerRequest`; `keyPrefix`, whose tests run in the ioredis passes only) are dropped.
 */
export function glideConfig(target, options = {}) {
  const fromUrl = typeof target === 'string' ? parseUrl(target) : undefined;
  let addresses = fromUrl ? [fromUrl.address] : Array.isArray(target) ? [...target] : [target];
  if (options.host !== undefined || options.port !== undefined) {
    addresses = [{ host: options.host ?? addresses[0].host, port: options.port ?? addresses[0].port }];
  }
  const db = options.db ?? fromUrl?.db;
  const username = options.username ?? fromUrl?.username;
  const password = options.password ?? fromUrl?.password;
  return {
    addresses: addresses.map((a) => ({ host: a.host, port: a.port })),
    ...(db === undefined || db === 0 ? {} : { databaseId: db }),
    ...(username === undefined && password === undefined ? {} : { credentials: { ...(username ? { username } : {}), password: password ?? '' } }),
    ...(options.lazyConnect ? { lazyConnect: true } : {}),
    ...(options.commandTimeout === undefined ? {} : { requestTimeout: options.commandTimeout }),
    ...(options.connectTimeout === undefined ? {} : { advancedConfiguration: { connectionTimeout: options.connectTimeout } }),
  };
}

/** A connected standalone GLIDE client (`GlideClient`) to `url` with `options` (ioredis options) translated. */
export function createGlideClient(url, options = {}) {
  return glidePackage().GlideClient.createClient(glideConfig(url, options));
}
