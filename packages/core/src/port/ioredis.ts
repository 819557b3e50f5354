import type { RedisClientLike, RedisClusterLike, RedisCommandsLike } from './redis-like.js';
import { ioredisSubscriber } from './ioredis-subscriber.js';
import type { PipelineReplies, PortCommand, PortEvent, PortNode, PortStatus, RedisPort } from './port.js';

/** An ioredis-shaped client, standalone or Cluster. */
export type RedisLike = RedisClientLike | RedisClusterLike;

/**
 * The port over an ioredis (5 or 6) or iovalkey `Redis` or `Cluster`: with
 * ioredis-subscriber.ts and errors.ts, the only code that knows
 * ioredis's API: flattened `evalsha(sha, numkeys, ...)`, `pipeline()`,
 * `duplicate()` with `keyPrefix`, the Cluster's slot map.
 */

/** True for an ioredis-shaped client: the members this adapter calls. */
export function isIoredis(client: object): client is RedisLike {
  const c = client as Record<string, unknown>;
  return ['evalsha', 'eval', 'pipeline', 'duplicate', 'on', 'off'].every((method) => typeof c[method] === 'function');
}

/** EVAL / EVALSHA with the keys and arguments as arrays, which ioredis flattens (one level). */
type ScriptCall = (script: string, numkeys: number, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

/** Calls with at most this many keys and arguments are sent as one flat list. */
const FLAT_CALL_MAX = 16;

/**
 * EVAL / EVALSHA: a short call as one flat list, a long one (a renewal carries 500 keys) as its
 * arrays, which ioredis flattens.
 */
function scriptCall(redis: RedisLike, call: ScriptCall, script: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  if (keys.length + args.length > FLAT_CALL_MAX) return call.call(redis, script, keys.length, keys, args);
  const flat: (string | number)[] = [script, keys.length];
  for (let i = 0; i < keys.length; i++) flat.push(keys[i]!);
  for (let i = 0; i < args.length; i++) flat.push(args[i]!);
  return (call as unknown as (...values: (string | number)[]) => Promise<unknown>).apply(redis, flat);
}

/** EVALSHA of up to 6 keys and arguments as a call of fixed arity; longer calls go through scriptCall. */
function evalsha(redis: RedisLike, sha: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  const k = keys.length;
  const at = (i: number) => (i < k ? keys[i]! : args[i - k]!);
  switch (k + args.length) {
    case 1:
      return redis.evalsha(sha, k, at(0));
    case 2:
      return redis.evalsha(sha, k, at(0), at(1));
    case 3:
      return redis.evalsha(sha, k, at(0), at(1), at(2));
    case 4:
      return redis.evalsha(sha, k, at(0), at(1), at(2), at(3));
    case 5:
      return redis.evalsha(sha, k, at(0), at(1), at(2), at(3), at(4));
    case 6:
      return redis.evalsha(sha, k, at(0), at(1), at(2), at(3), at(4), at(5));
    default:
      return scriptCall(redis, redis.evalsha as unknown as ScriptCall, sha, keys, args);
  }
}

function isClusterClient(redis: RedisLike): redis is RedisClusterLike {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/** The ioredis `keyPrefix` of a client (standalone or Cluster), '' without one. */
function keyPrefixOf(redis: RedisLike): string {
  const options = (redis as { options?: { keyPrefix?: unknown; redisOptions?: { keyPrefix?: unknown } } }).options;
  const keyPrefix = options?.keyPrefix ?? options?.redisOptions?.keyPrefix;
  return typeof keyPrefix === 'string' ? keyPrefix : '';
}

/** Where a standalone client connects (`host:port/db`, `sentinel:name/db`); undefined for a Cluster or unknown. */
function endpointOf(redis: RedisLike): string | undefined {
  type Options = { host?: unknown; port?: unknown; path?: unknown; db?: unknown; sentinels?: unknown; name?: unknown };
  const options = (redis as { options?: Options }).options;
  if (!options || isClusterClient(redis)) return undefined;
  let where: string;
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0) where = `sentinel:${String(options.name)}`;
  else if (typeof options.path === 'string' && options.path) where = options.path;
  else where = `${String(options.host)}:${String(options.port)}`;
  return `${where}/${String(options.db ?? 0)}`;
}

function nodeOf(client: RedisClientLike): PortNode {
  const { host, port } = client.options as { host?: string; port?: number };
  return { address: host === undefined ? undefined : `${host}:${String(port)}`, info: () => client.info() };
}

function queue(pipeline: ReturnType<RedisCommandsLike['pipeline']>, command: PortCommand): void {
  if (command.kind === 'wait') pipeline.wait(command.replicas, command.timeoutMs);
  else if (command.kind === 'eval') pipeline.eval(command.source, command.keys.length, ...command.keys, ...command.args);
  else pipeline.evalsha(command.sha, command.keys.length, ...command.keys, ...command.args);
}

/** Wraps an ioredis-shaped client. */
export function ioredisPort(redis: RedisLike): RedisPort {
  const cluster = isClusterClient(redis);
  const offlineQueue = (redis as { options?: { enableOfflineQueue?: unknown } }).options?.enableOfflineQueue !== false;
  return {
    kind: 'ioredis',
    client: redis,
    isCluster: cluster,
    keyPrefix: keyPrefixOf(redis),
    endpoint: endpointOf(redis),
    offlineQueue,
    status: () => redis.status as PortStatus,
    connect: () => {
      if (cluster) (redis as RedisClusterLike).connect().catch(() => undefined);
    },
    evalsha: (sha, keys, args) => evalsha(redis, sha, keys, args),
    eval: (source, keys, args) => scriptCall(redis, redis.eval as unknown as ScriptCall, source, keys, args),
    // ioredis sends a Cluster pipeline to the node of its first key.
    pipeline: async (commands) => {
      const pipeline = redis.pipeline();
      for (const command of commands) queue(pipeline, command);
      return ((await pipeline.exec()) ?? []) as PipelineReplies;
    },
    hmget: (key, fields) => redis.hmget(key, ...fields),
    setEx: (key, value, seconds) => redis.set(key, value, 'EX', seconds),
    del: (key) => redis.del(key),
    nodeOfSlot: (slot) => (cluster ? (redis as RedisClusterLike).slots[slot]?.[0] : undefined),
    primaries: () => (cluster ? (redis as RedisClusterLike).nodes('master') : [redis as RedisClientLike]).map(nodeOf),
    on: (event: PortEvent, listener) => void redis.on(event, listener),
    off: (event: PortEvent, listener) => void redis.off(event, listener),
    subscriber: (handlers) => ioredisSubscriber(redis, cluster, handlers),
  };
}
