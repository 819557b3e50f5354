import { mapNodeRedisError } from './errors.js';
import { clusterSubscriber, duplicateSubscriber, sharedSubscriber } from './node-redis-subscriber.js';
import { commandArgs, type PipelineReplies, type PortEvent, type PortNode, type PortStatus, type RedisPort } from './port.js';
import type { Client, Cluster, Common, Listener, Sentinel } from './node-redis-types.js';

/**
 * The port over a node-redis (the `redis` package, 5 and 6) client, Cluster
 * or Sentinel: with node-redis-subscriber.ts and errors.ts, the
 * only code that knows node-redis's API. Every command goes
 * through `sendCommand` with string arguments, which both majors share and
 * which returns the server's reply as it is (RESP2 or RESP3 alike for what
 * holdfast sends). Commands issued in one tick leave in one write on one
 * connection (node-redis pipelines them by itself), so a pipeline is those
 * commands sent together, each with its own outcome; `multi().execAsPipeline()`
 * would reject the lot on the first error.
 */

/** True for a node-redis client, Cluster or Sentinel (ioredis has no `isOpen`). */
export function isNodeRedis(client: object): boolean {
  const c = client as Record<string, unknown>;
  return typeof c.isOpen === 'boolean' && typeof c.sendCommand === 'function' && typeof c.on === 'function';
}


/** Every outcome, each with its own error: sent in one tick, so in one write on one connection. */
async function settled(calls: Promise<unknown>[]): Promise<PipelineReplies> {
  const outcomes = await Promise.allSettled(calls);
  return outcomes.map((o): [Error | null, unknown] =>
    o.status === 'fulfilled' ? [null, o.value] : [toError(mapNodeRedisError(o.reason)), undefined],
  );
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/** A node-redis event per port event; the listener translation is kept to remove it again. */
type EventMap = Partial<Record<PortEvent, readonly string[]>>;

function events(target: Common, map: EventMap) {
  // One wrapper per (event, listener): core registers one function for several
  // events (`ready` and `close`, `close` and `end`), and off() of one event must
  // remove that event's wrapper only, leaving no other behind.
  const wrapped = new Map<PortEvent, Map<() => void, Listener[]>>();
  return {
    on: (event: PortEvent, listener: () => void) => {
      const names = map[event];
      if (!names) return;
      const fn: Listener = () => listener();
      let byListener = wrapped.get(event);
      if (!byListener) wrapped.set(event, (byListener = new Map()));
      byListener.set(listener, [...(byListener.get(listener) ?? []), fn]);
      for (const name of names) target.on(name, fn);
    },
    off: (event: PortEvent, listener: () => void) => {
      const byListener = wrapped.get(event);
      const fns = byListener?.get(listener);
      const fn = fns?.pop();
      if (!fn) return;
      if (fns!.length === 0) byListener!.delete(listener);
      for (const name of map[event] ?? []) target.off(name, fn);
    },
  };
}

/**
 * A node-redis Cluster whose `connect()` reached no root node closes again
 * (`isOpen` false) with no event: `connect()` rejects, and only whoever
 * awaits it knows. holdfast never holds that promise (the application calls
 * `connect()`, often before handing the client over), so a call waiting for
 * the first attempt's outcome would wait its whole `commandTimeoutMs`.
 *
 * What node-redis does emit is an `error` for each root node it failed to
 * read the slots from, the last one just before `connect()` rejects: the
 * steps between are promise continuations, no I/O, so by the next turn of
 * the event loop (`setImmediate`) the Cluster is closed if that attempt was
 * its last. An open Cluster seen closed then, with no `disconnect` (which
 * reports a close by the application), is one whose `connect()` failed: it is
 * reported as ioredis reports its own connection attempt that failed for good,
 * `close` then `end`, to the listeners of each.
 */
function failedConnects(redis: Common): {
  add(event: 'close' | 'end', listener: () => void): void;
  delete(event: 'close' | 'end', listener: () => void): void;
} {
  const listeners = { close: new Set<() => void>(), end: new Set<() => void>() };
  const count = () => listeners.close.size + listeners.end.size;
  /** Open when last seen, and not closed by the application since. */
  let open = false;
  let pending: ReturnType<typeof setImmediate> | undefined;
  const check = () => {
    pending = undefined;
    if (!open || redis.isOpen) return;
    open = false;
    for (const listener of [...listeners.close, ...listeners.end]) listener();
  };
  const onError = (error: unknown) => {
    if (redis.isOpen) open = true;
    pending ??= setImmediate(check);
    // Listening must not change what an `error` does: with no listener of the application's,
    // EventEmitter throws it from `emit`, and so does this one.
    if (redis.listenerCount('error') === 1) throw error;
  };
  const onDisconnect = () => (open = false);
  return {
    add: (event, listener) => {
      if (count() === 0) {
        open = redis.isOpen;
        redis.on('error', onError);
        redis.on('disconnect', onDisconnect);
      }
      listeners[event].add(listener);
    },
    delete: (event, listener) => {
      if (!listeners[event].delete(listener) || count() > 0) return;
      redis.off('error', onError);
      redis.off('disconnect', onDisconnect);
      if (pending) clearImmediate(pending);
      pending = undefined;
    },
  };
}

/** `close` and `end` listeners also told of a failed `connect()`, which node-redis reports by no event. */
function withFailedConnects(base: ReturnType<typeof events>, failed: ReturnType<typeof failedConnects>): ReturnType<typeof events> {
  return {
    on: (event, listener) => {
      base.on(event, listener);
      if (event === 'close' || event === 'end') failed.add(event, listener);
    },
    off: (event, listener) => {
      base.off(event, listener);
      if (event === 'close' || event === 'end') failed.delete(event, listener);
    },
  };
}

/** Wraps a node-redis client, Cluster or Sentinel. */
export function nodeRedisPort(client: object): RedisPort {
  const c = client as Record<string, unknown>;
  if (typeof c.getSlotMaster === 'function') return clusterPort(client as Cluster);
  if (typeof c.getMasterNode === 'function') return sentinelPort(client as Sentinel);
  return clientPort(client as Client);
}

function clientPort(redis: Client): RedisPort {
  const send = (args: string[]) => redis.sendCommand(args).catch((error: unknown) => Promise.reject(mapNodeRedisError(error)));
  let readyBefore = redis.isReady;
  redis.on('ready', () => (readyBefore = true));
  const options = (redis as { options?: { url?: string; socket?: { host?: string; port?: number; path?: string }; database?: number } }).options;
  const socket = options?.socket;
  const where = socket?.path ?? (socket?.host !== undefined || socket?.port !== undefined ? `${socket.host ?? 'localhost'}:${socket.port ?? 6379}` : options?.url);
  return {
    kind: 'node-redis',
    client: redis,
    isCluster: false,
    keyPrefix: '',
    endpoint: where === undefined ? undefined : `${where}/${String(options?.database ?? 0)}`,
    offlineQueue: (redis as { options?: { disableOfflineQueue?: boolean } }).options?.disableOfflineQueue !== true,
    status: (): PortStatus => (redis.isReady ? 'ready' : redis.isOpen ? (readyBefore ? 'reconnecting' : 'connecting') : 'end'),
    connect: () => undefined,
    evalsha: (sha, keys, args) => send(commandArgs({ kind: 'evalsha', sha, keys, args })),
    eval: (source, keys, args) => send(commandArgs({ kind: 'eval', source, keys, args })),
    pipeline: (commands) => settled(commands.map((command) => redis.sendCommand(commandArgs(command)))),
    hmget: (key, fields) => send(['HMGET', key, ...fields]) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send(['SET', key, value, 'EX', String(seconds)]),
    del: (key) => send(['DEL', key]),
    nodeOfSlot: () => undefined,
    primaries: (): PortNode[] => [{ address: where, info: () => send(['INFO']) as Promise<string> }],
    // A lost connection shows as `reconnecting` (node-redis has no `close` event).
    ...events(redis, { ready: ['ready'], close: ['reconnecting'], end: ['end'] }),
    subscriber: (handlers) => duplicateSubscriber(redis.duplicate(), handlers).port,
  };
}

function clusterPort(redis: Cluster): RedisPort {
  const send = (key: string | undefined, args: string[], readonly = false) =>
    redis.sendCommand(key, readonly, args).catch((error: unknown) => Promise.reject(mapNodeRedisError(error)));
  return {
    kind: 'node-redis',
    client: redis,
    isCluster: true,
    keyPrefix: '',
    endpoint: undefined,
    offlineQueue: true,
    // Open but no slot map yet: its `connect()` is under way (node-redis sends nothing before it
    // knows the slots, and fails what it is given meanwhile). It keeps no other Cluster-wide
    // state: its nodes reconnect one by one, and when none of the primaries' connections is
    // ready, no call can be answered (`reconnecting`, as ioredis says it).
    status: (): PortStatus => {
      if (!redis.isOpen) return 'end';
      if (redis.masters.length === 0) return 'connecting';
      return redis.masters.some((node) => !node.client || node.client.isReady) ? 'ready' : 'reconnecting';
    },
    connect: () => undefined,
    evalsha: (sha, keys, args) => send(keys[0], commandArgs({ kind: 'evalsha', sha, keys, args })),
    eval: (source, keys, args) => send(keys[0], commandArgs({ kind: 'eval', source, keys, args })),
    // Each command to the node of `routingKey`; node-redis follows a MOVED per command.
    pipeline: (commands, routingKey) => settled(commands.map((command) => redis.sendCommand(routingKey, false, commandArgs(command)))),
    hmget: (key, fields) => send(key, ['HMGET', key, ...fields], true) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send(key, ['SET', key, value, 'EX', String(seconds)]),
    del: (key) => send(key, ['DEL', key]),
    nodeOfSlot: (slot) => {
      try {
        return redis.getSlotMaster(slot)?.address;
      } catch {
        return undefined; // No slot map yet: node-redis indexes a missing shard.
      }
    },
    // Those with a ready connection: an INFO to one reconnecting would wait in its offline queue
    // (the check runs again after the next reconnection).
    primaries: () =>
      redis.masters.filter((node) => node.client?.isReady === true).map(
        (node): PortNode => ({
          address: node.address,
          info: async () => {
            const nodeClient = await redis.nodeClient(node);
            return (await nodeClient.sendCommand(['INFO']).catch((error: unknown) => Promise.reject(mapNodeRedisError(error)))) as string;
          },
        }),
      ),
    // `connect`: the slot map is known (the end of `connect()`). `end`: closed by the application
    // (`disconnect`). A `connect()` that reached no root node, of which node-redis says nothing,
    // is reported as `close` and `end` (failedConnects).
    ...withFailedConnects(events(redis, { ready: ['connect'], close: ['node-reconnecting'], end: ['disconnect'] }), failedConnects(redis)),
    subscriber: (handlers) => clusterSubscriber(redis, handlers),
  };
}

function sentinelPort(redis: Sentinel): RedisPort {
  const send = (args: string[]) => redis.sendCommand(false, args).catch((error: unknown) => Promise.reject(mapNodeRedisError(error)));
  const master = () => {
    const node = redis.getMasterNode();
    return node ? `${node.host}:${node.port}` : undefined;
  };
  return {
    kind: 'node-redis',
    client: redis,
    isCluster: false,
    keyPrefix: '',
    endpoint: undefined,
    offlineQueue: true,
    status: (): PortStatus => (redis.isReady ? 'ready' : redis.isOpen ? 'reconnecting' : 'end'),
    connect: () => undefined,
    evalsha: (sha, keys, args) => send(commandArgs({ kind: 'evalsha', sha, keys, args })),
    eval: (source, keys, args) => send(commandArgs({ kind: 'eval', source, keys, args })),
    // A leased connection: with a pool of several, a WAIT elsewhere would count another connection's writes.
    pipeline: (commands) =>
      redis.use((leased) => settled(commands.map((command) => leased.sendCommand(false, commandArgs(command))))),
    hmget: (key, fields) => send(['HMGET', key, ...fields]) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send(['SET', key, value, 'EX', String(seconds)]),
    del: (key) => send(['DEL', key]),
    nodeOfSlot: () => undefined,
    primaries: (): PortNode[] => [{ address: master(), info: () => send(['INFO']) as Promise<string> }],
    ...events(redis, { close: ['topology-change'] }),
    subscriber: (handlers) => sharedSubscriber(redis, handlers),
  };
}
