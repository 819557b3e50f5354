import { createRequire } from 'node:module';
import { countSent } from './command-counter.js';

/**
 * node-redis (the `redis` package) for the bench's node-redis rows: version 5 (`redis`, 5.12.1) and the
 * current major 6 (`redis6`, an alias of redis@6.3.1), each connected the way its README shows (`await
 * createClient(...).connect()`).
 */

export type NodeRedisMajor = 5 | 6;

/** What the bench uses of a node-redis client; both majors have it with these shapes. */
export interface NodeRedisClient {
  connect(): Promise<unknown>;
  destroy(): void;
  on(event: 'error', listener: (error: unknown) => void): unknown;
  ping(): Promise<unknown>;
  set(key: string, value: string, options: { NX: true; PX: number }): Promise<string | null>;
  scriptLoad(script: string): Promise<string>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  duplicate(): NodeRedisClient;
  sSubscribe(channel: string, listener: (message: string, channel: string) => void): Promise<void>;
}

interface NodeRedisModule {
  createClient(options: { socket: { host: string; port: number } }): NodeRedisClient;
}

/** Package name of each major in bench/package.json. */
export const NODE_REDIS_PACKAGE: Record<NodeRedisMajor, string> = { 5: 'redis', 6: 'redis6' };

const requireHere = createRequire(import.meta.url);
const loaded = new Map<NodeRedisMajor, Promise<NodeRedisModule>>();
const COUNTED = Symbol.for('holdfast-bench.node-redis-encoder');

type Encode = ((args: readonly unknown[]) => unknown) & { [COUNTED]?: true };

/** Wraps the RESP encoder of the @redis/client copy this major loads (once). */
function countEncoder(major: NodeRedisMajor): void {
  const main = requireHere.resolve(NODE_REDIS_PACKAGE[major]);
  // @redis/client has no exports map; commands-queue.js calls `encoder_1.default(args)`
  // through the module object on every write, so replacing the export is seen there.
  const encoder = createRequire(main)('@redis/client/dist/lib/RESP/encoder.js') as { default: Encode };
  if (encoder.default[COUNTED]) return;
  const original = encoder.default;
  const wrapped: Encode = (args) => {
    countSent(String(args[0] ?? '?'));
    return original(args);
  };
  wrapped[COUNTED] = true;
  encoder.default = wrapped;
}

export function loadNodeRedis(major: NodeRedisMajor): Promise<NodeRedisModule> {
  let module = loaded.get(major);
  if (!module) {
    countEncoder(major);
    module = import(NODE_REDIS_PACKAGE[major]) as Promise<NodeRedisModule>;
    loaded.set(major, module);
  }
  return module;
}

/** A connected node-redis client of this major on one of the bench's servers, with its error listener. */
export async function connectNodeRedis(port: number, major: NodeRedisMajor): Promise<NodeRedisClient> {
  const { createClient } = await loadNodeRedis(major);
  const client = createClient({ socket: { host: '127.0.0.1', port } });
  // node-redis throws an 'error' event with no listener from the socket's callback.
  client.on('error', () => undefined);
  await client.connect();
  await client.ping();
  return client;
}
