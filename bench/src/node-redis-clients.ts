import { createRequire } from 'node:module';
import { countSent } from './command-counter.js';

/**
 * node-redis (the `redis` package, 5.12.1) for the bench's node-redis rows, connected the way its README
 * shows (`await createClient(...).connect()`).
 */

/** What the bench uses of a node-redis client. */
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

const requireHere = createRequire(import.meta.url);
let loaded: Promise<NodeRedisModule> | undefined;
const COUNTED = Symbol.for('holdfast-bench.node-redis-encoder');

type Encode = ((args: readonly unknown[]) => unknown) & { [COUNTED]?: true };

/** Wraps the RESP encoder of the @redis/client copy `redis` loads (once). */
function countEncoder(): void {
  const main = requireHere.resolve('redis');
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

function loadNodeRedis(): Promise<NodeRedisModule> {
  if (!loaded) {
    countEncoder();
    loaded = import('redis') as Promise<NodeRedisModule>;
  }
  return loaded;
}

/** A connected node-redis client on one of the bench's servers, with its error listener. */
export async function connectNodeRedis(port: number): Promise<NodeRedisClient> {
  const { createClient } = await loadNodeRedis();
  const client = createClient({ socket: { host: '127.0.0.1', port } });
  // node-redis throws an 'error' event with no listener from the socket's callback.
  client.on('error', () => undefined);
  await client.connect();
  await client.ping();
  return client;
}
