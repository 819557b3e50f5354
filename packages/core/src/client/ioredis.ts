import type { RedisClientLike, RedisClusterLike, RedisCommandsLike } from '../redis-like.js';

/** An ioredis-shaped client, standalone or Cluster. */
type RedisLike = RedisClientLike | RedisClusterLike;
import { withTimeout } from '../redis-call.js';
import type { PipelineReplies, PortCommand, PortEvent, PortNode, PortStatus, RedisPort, SubscriberHandlers, SubscriberPort } from './port.js';

/**
 * The port over an ioredis (5 or 6) or iovalkey `Redis` or `Cluster`. The only
 * file that knows ioredis's API: flattened `evalsha(sha, numkeys, ...)`,
 * `pipeline()`, `duplicate()` with `keyPrefix`, the Cluster's slot map.
 */

/** True for an ioredis-shaped client: the members this adapter calls. */
export function isIoredis(client: object): client is RedisLike {
  const c = client as Record<string, unknown>;
  return ['evalsha', 'eval', 'pipeline', 'duplicate', 'on', 'off'].every((method) => typeof c[method] === 'function');
}

/** True for an error the server replied (ioredis's `ReplyError`), not a connection failure. */
export function isIoredisReply(error: Error): boolean {
  return error.name === 'ReplyError';
}

/** EVAL / EVALSHA with the keys and arguments as arrays, which ioredis flattens (one level). */
type ScriptCall = (script: string, numkeys: number, keys: readonly string[], args: readonly (string | number)[]) => Promise<unknown>;

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
    // The arrays are passed as they are rather than spread: a renew call carries
    // 500 keys, and spreading copied them twice more per call.
    evalsha: (sha, keys, args) => (redis.evalsha as unknown as ScriptCall).call(redis, sha, keys.length, keys, args),
    eval: (source, keys, args) => (redis.eval as unknown as ScriptCall).call(redis, source, keys.length, keys, args),
    // ioredis sends a Cluster pipeline to the node of its first key.
    pipeline: async (commands) => {
      const pipeline = redis.pipeline();
      for (const command of commands) queue(pipeline, command);
      return ((await pipeline.exec()) ?? []) as PipelineReplies;
    },
    hmget: (key, fields) => redis.hmget(key, ...fields),
    setEx: (key, value, seconds) => redis.set(key, value, 'EX', seconds),
    nodeOfSlot: (slot) => (cluster ? (redis as RedisClusterLike).slots[slot]?.[0] : undefined),
    primaries: () => (cluster ? (redis as RedisClusterLike).nodes('master') : [redis as RedisClientLike]).map(nodeOf),
    on: (event: PortEvent, listener) => void redis.on(event, listener),
    off: (event: PortEvent, listener) => void redis.off(event, listener),
    subscriber: (handlers) => ioredisSubscriber(redis, handlers),
  };
}

/**
 * A duplicate of the user's client, without its `keyPrefix`: channel names
 * are passed in full (see LockKeys.channel), and messages come back under them.
 */
function ioredisSubscriber(redis: RedisLike, handlers: SubscriberHandlers): SubscriberPort {
  let subscriber: RedisLike;
  let onRefresh: (() => void) | undefined;
  if (isClusterClient(redis)) {
    // A Cluster needs one sharded subscriber per primary: ioredis keeps them,
    // and moves subscriptions when it sees the slot map change, with
    // `shardedSubscribers`. A subscriber sends no keyed command, so it never
    // meets a MOVED itself: it refreshes its map whenever the user's client does.
    const redisOptions = { ...redis.options.redisOptions, keyPrefix: '' };
    const sharded = redis.duplicate([], { shardedSubscribers: true, keyPrefix: '', redisOptions });
    onRefresh = () => sharded.refreshSlotsCache(() => undefined);
    redis.on('refresh', onRefresh);
    subscriber = sharded;
  } else {
    // ioredis's own resubscription after a reconnection leaves its promise
    // unhandled (an unhandled rejection when the connection drops again
    // meanwhile): Waiters sends the same subscriptions and handles failures.
    subscriber = redis.duplicate({ keyPrefix: '', autoResubscribe: false });
  }
  const cluster = isClusterClient(subscriber);
  let connectedBefore = false;
  subscriber.on(cluster ? 'subscribersReady' : 'ready', () => {
    if (connectedBefore) handlers.onReconnected();
    connectedBefore = true;
  });
  subscriber.on('error', handlers.onError);
  subscriber.on('smessage', handlers.onMessage);
  subscriber.on('message', handlers.onMessage);
  return {
    get listening() {
      return subscriber.status === 'ready';
    },
    /**
     * ioredis lets SSUBSCRIBE out while the connection is still being set up;
     * the reply turns the connection into a subscriber before ioredis's ready
     * check (INFO) runs, which is then refused, and the reconnection that
     * follows comes back without that subscription: its waiters would never be woken.
     */
    whenReady: (timeoutMs) => (cluster || subscriber.status === 'ready' ? Promise.resolve() : nextReady(subscriber, timeoutMs)),
    subscribe: async (channel, sharded) => {
      await (sharded ? subscriber.ssubscribe(channel) : subscriber.subscribe(channel));
    },
    unsubscribe: async (channel, sharded) => {
      await (sharded ? subscriber.sunsubscribe(channel) : subscriber.unsubscribe(channel));
    },
    close: () => {
      if (onRefresh) redis.off('refresh', onRefresh);
      subscriber.disconnect();
    },
  };
}

/** The next `ready` of `client`, within `timeoutMs`; the listener is removed either way. */
async function nextReady(client: RedisLike, timeoutMs: number): Promise<void> {
  let onReady: (() => void) | undefined;
  try {
    await withTimeout(new Promise<void>((resolve) => client.once('ready', (onReady = resolve))), timeoutMs);
  } finally {
    if (onReady) client.off('ready', onReady);
  }
}
