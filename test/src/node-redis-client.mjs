// The node-redis client of the node-redis pass (HOLDFAST_CLIENT=node-redis,
// HOLDFAST_NODE_REDIS=5|6), made from the ioredis options a test asked for.
// Plain JavaScript, so the processes the suite starts (chaos workers, the
// examples) create it the same way the harness does (test/src/redis-client.ts).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Which client library the pass runs holdfast on (HOLDFAST_CLIENT: node-redis, glide; ioredis otherwise). */
export const clientMode =
  process.env.HOLDFAST_CLIENT === 'node-redis' ? 'node-redis' : process.env.HOLDFAST_CLIENT === 'glide' ? 'glide' : 'ioredis';

/** The node-redis major of the pass (5 unless HOLDFAST_NODE_REDIS=6). */
export const nodeRedisMajor = process.env.HOLDFAST_NODE_REDIS === '6' ? '6' : '5';

/** The `redis` package of a major: `redis` (5) or the `redis6` alias. */
export function nodeRedis(major = nodeRedisMajor) {
  return require(major === '6' ? 'redis6' : 'redis');
}

/** node-redis's socket options for what a test asked of ioredis. */
export function socketOptions(options) {
  const retry = options.retryStrategy;
  return {
    ...(options.connectTimeout !== undefined && { connectTimeout: options.connectTimeout }),
    ...(retry && {
      reconnectStrategy: (retries) => {
        const delay = retry(retries + 1);
        return typeof delay === 'number' ? delay : false;
      },
    }),
  };
}

/** node-redis client options (besides where it connects) for what a test asked of ioredis. */
export function clientOptions(options) {
  return {
    ...(options.db !== undefined && { database: options.db }),
    ...(options.username !== undefined && { username: options.username }),
    ...(options.password !== undefined && { password: options.password }),
    ...(options.enableOfflineQueue === false && { disableOfflineQueue: true }),
  };
}

/**
 * A node-redis client (of the pass's major, not yet connected) to `target`
 * (a redis:// URL or host and port) with `options` (ioredis options) translated.
 */
export function createNodeRedisClient(target, options = {}) {
  const socket = {
    ...(typeof target === 'string' ? {} : { host: options.host ?? target.host, port: options.port ?? target.port }),
    ...socketOptions(options),
  };
  return nodeRedis().createClient({ ...(typeof target === 'string' && { url: target }), socket, ...clientOptions(options) });
}
