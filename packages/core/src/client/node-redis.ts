import { RedisUnreachableError } from '../errors.js';
import { slotOf } from '../keys.js';
import { markTransient, withTimeout } from '../redis-call.js';
import type { PipelineReplies, PortCommand, PortEvent, PortNode, PortStatus, RedisPort, SubscriberHandlers, SubscriberPort } from './port.js';

/**
 * The port over a node-redis (the `redis` package, 5 and 6) client, Cluster
 * or Sentinel: the only file that knows node-redis's API. Every command goes
 * through `sendCommand` with string arguments, which both majors share and
 * which returns the server's reply as it is (RESP2 or RESP3 alike for what
 * holdfast sends). Commands issued in one tick leave in one write on one
 * connection (node-redis pipelines them by itself), so a pipeline is those
 * commands sent together, each with its own outcome; `multi().execAsPipeline()`
 * would reject the lot on the first error.
 */

type Listener = (...args: any[]) => void;
type PubSubListener = (message: string, channel: string) => void;

/** The node-redis members this adapter calls, common to a client, a Cluster and a Sentinel. */
interface Common {
  readonly isOpen: boolean;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  sSubscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  sUnsubscribe(channels: string, listener?: PubSubListener): Promise<unknown>;
  subscribe(channels: string, listener: PubSubListener): Promise<unknown>;
  unsubscribe(channels: string, listener?: PubSubListener): Promise<unknown>;
}
interface Client extends Common {
  readonly isReady: boolean;
  sendCommand(args: string[]): Promise<unknown>;
  duplicate(): Client;
  connect(): Promise<unknown>;
  destroy?(): unknown;
  disconnect?(): Promise<unknown>;
}
interface ClusterNode {
  readonly address: string;
  /** Its connection, once node-redis made one. */
  readonly client?: { readonly isReady: boolean };
}
interface Cluster extends Common {
  sendCommand(firstKey: string | undefined, isReadonly: boolean, args: string[]): Promise<unknown>;
  getSlotMaster(slot: number): ClusterNode | undefined;
  readonly masters: readonly ClusterNode[];
  nodeClient(node: ClusterNode): Client | Promise<Client>;
  duplicate(): Cluster;
  connect(): Promise<unknown>;
  destroy?(): unknown;
  disconnect?(): Promise<unknown>;
}
interface Sentinel extends Common {
  readonly isReady: boolean;
  sendCommand(isReadonly: boolean, args: string[]): Promise<unknown>;
  use<T>(fn: (client: { sendCommand(isReadonly: boolean, args: string[]): Promise<unknown> }) => Promise<T>): Promise<T>;
  getMasterNode(): { host: string; port: number } | undefined;
}

/** True for a node-redis client, Cluster or Sentinel (ioredis has no `isOpen`). */
export function isNodeRedis(client: object): boolean {
  const c = client as Record<string, unknown>;
  return typeof c.isOpen === 'boolean' && typeof c.sendCommand === 'function' && typeof c.on === 'function';
}

/** node-redis's connection failures: the command may not have run, and another attempt may succeed. */
const CONNECTION_FAILURES = new Set([
  'SocketClosedUnexpectedlyError',
  'ClientOfflineError',
  'ConnectionTimeoutError',
  'SocketTimeoutError',
  'DisconnectsClientError',
  'ReconnectStrategyError',
  'RootNodesUnavailableError',
  'SocketTimeoutDuringMaintenanceError',
  'CommandTimeoutDuringMaintenanceError',
]);

/**
 * node-redis's error classes, as holdfast reports them (the one place that
 * knows them; matched by class name, as no node-redis module is imported).
 * Replies from the server (`ErrorReply`: NOSCRIPT, READONLY, ...) keep their
 * message, which redis-call.ts reads as it does ioredis's. Connection
 * failures are retried like ioredis's, then come out as RedisCommandError. A
 * client the application closed (`ClientClosedError`) never answers again:
 * RedisUnreachableError with status `end`, not retried.
 */
export function mapNodeRedisError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const name = error.constructor.name;
  if (name === 'ClientClosedError') {
    return new RedisUnreachableError('end', 'The node-redis client is closed: it sends nothing any more', { cause: error });
  }
  return CONNECTION_FAILURES.has(name) ? markTransient(error) : error;
}

/** True for an error the server replied (node-redis's `ErrorReply` and its subclasses). */
export function isNodeRedisReply(error: Error): boolean {
  return ['ErrorReply', 'SimpleError', 'BlobError'].includes(error.constructor.name);
}

const str = (values: readonly (string | number)[]): string[] => values.map(String);

function commandArgs(command: PortCommand): string[] {
  if (command.kind === 'wait') return ['WAIT', String(command.replicas), String(command.timeoutMs)];
  const head = command.kind === 'eval' ? ['EVAL', command.source] : ['EVALSHA', command.sha];
  return [...head, String(command.keys.length), ...command.keys, ...str(command.args)];
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
  const wrapped = new Map<() => void, Listener>();
  return {
    on: (event: PortEvent, listener: () => void) => {
      const names = map[event];
      if (!names) return;
      const fn: Listener = () => listener();
      wrapped.set(listener, fn);
      for (const name of names) target.on(name, fn);
    },
    off: (event: PortEvent, listener: () => void) => {
      const fn = wrapped.get(listener);
      if (!fn) return;
      wrapped.delete(listener);
      for (const name of map[event] ?? []) target.off(name, fn);
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
    evalsha: (sha, keys, args) => send(['EVALSHA', sha, String(keys.length), ...keys, ...str(args)]),
    eval: (source, keys, args) => send(['EVAL', source, String(keys.length), ...keys, ...str(args)]),
    pipeline: (commands) => settled(commands.map((command) => redis.sendCommand(commandArgs(command)))),
    hmget: (key, fields) => send(['HMGET', key, ...fields]) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send(['SET', key, value, 'EX', String(seconds)]),
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
    evalsha: (sha, keys, args) => send(keys[0], ['EVALSHA', sha, String(keys.length), ...keys, ...str(args)]),
    eval: (source, keys, args) => send(keys[0], ['EVAL', source, String(keys.length), ...keys, ...str(args)]),
    // Each command to the node of `routingKey`; node-redis follows a MOVED per command.
    pipeline: (commands, routingKey) => settled(commands.map((command) => redis.sendCommand(routingKey, false, commandArgs(command)))),
    hmget: (key, fields) => send(key, ['HMGET', key, ...fields], true) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send(key, ['SET', key, value, 'EX', String(seconds)]),
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
    // `connect`: the slot map is known (the end of `connect()`).
    ...events(redis, { ready: ['connect'], close: ['node-reconnecting'], end: ['disconnect'] }),
    subscriber: (handlers) => clusterSubscriber(redis, handlers),
  };
}

/** How often a Cluster subscriber compares its slot map with the application client's. */
const TOPOLOGY_CHECK_MS = 250;

/** The Cluster slot of a channel or key: its hash tag's, when it has one (Redis's rule). */
function clusterSlot(name: string): number {
  const open = name.indexOf('{');
  const close = open === -1 ? -1 : name.indexOf('}', open + 1);
  const hashed = close > open + 1 ? name.slice(open + 1, close) : name;
  return slotOf(hashed);
}

/**
 * A Cluster's sharded subscriber: a duplicate of the application's Cluster.
 * node-redis moves a sharded subscription when the server drops it
 * (`SUNSUBSCRIBE` pushed by Redis 7.2+ when a slot moves); Redis 7.0 sends
 * nothing, and a subscriber sends no keyed command that would meet a MOVED.
 * So the subscriber follows the application's client, which learns of a moved
 * slot from the MOVED its commands (holdfast's own included) meet: when a
 * subscribed channel's slot is served elsewhere by the application's map
 * than by the subscriber's, the subscriber is made again from a fresh
 * duplicate, and every subscription is sent again (`onReconnected`).
 */
function clusterSubscriber(redis: Cluster, handlers: SubscriberHandlers): SubscriberPort {
  const slots = new Map<string, number>();
  let current = duplicateSubscriber(redis.duplicate(), handlers);
  let closed = false;
  const ownerIn = (cluster: Cluster, slot: number): string | undefined => {
    try {
      return cluster.getSlotMaster(slot)?.address;
    } catch {
      return undefined; // No slot map yet.
    }
  };
  const timer = setInterval(() => {
    const mine = current.cluster;
    if (!mine || slots.size === 0) return;
    for (const slot of new Set(slots.values())) {
      const theirs = ownerIn(redis, slot);
      const ours = ownerIn(mine, slot);
      if (theirs !== undefined && ours !== undefined && theirs !== ours) {
        current.port.close();
        current = duplicateSubscriber(redis.duplicate(), handlers);
        current.port.whenReady(60_000).then(
          () => !closed && handlers.onReconnected(),
          (error: unknown) => !closed && handlers.onError(error),
        );
        return;
      }
    }
  }, TOPOLOGY_CHECK_MS);
  timer.unref();
  return {
    get listening() {
      return current.port.listening;
    },
    whenReady: (timeoutMs) => current.port.whenReady(timeoutMs),
    subscribe: async (channel, sharded) => {
      slots.set(channel, clusterSlot(channel));
      await current.port.subscribe(channel, sharded);
    },
    unsubscribe: async (channel, sharded) => {
      slots.delete(channel);
      await current.port.unsubscribe(channel, sharded);
    },
    close: () => {
      closed = true;
      clearInterval(timer);
      current.port.close();
    },
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
    evalsha: (sha, keys, args) => send(['EVALSHA', sha, String(keys.length), ...keys, ...str(args)]),
    eval: (source, keys, args) => send(['EVAL', source, String(keys.length), ...keys, ...str(args)]),
    // A leased connection: with a pool of several, a WAIT elsewhere would count another connection's writes.
    pipeline: (commands) =>
      redis.use((leased) => settled(commands.map((command) => leased.sendCommand(false, commandArgs(command))))),
    hmget: (key, fields) => send(['HMGET', key, ...fields]) as Promise<(string | null)[]>,
    setEx: (key, value, seconds) => send(['SET', key, value, 'EX', String(seconds)]),
    nodeOfSlot: () => undefined,
    primaries: (): PortNode[] => [{ address: master(), info: () => send(['INFO']) as Promise<string> }],
    ...events(redis, { close: ['topology-change'] }),
    subscriber: (handlers) => sharedSubscriber(redis, handlers),
  };
}

/** A subscriber on a duplicate holdfast owns (client or Cluster), connected at once. */
function duplicateSubscriber(subscriber: Client | Cluster, handlers: SubscriberHandlers): { port: SubscriberPort; cluster: Cluster | undefined } {
  const listener: PubSubListener = (message, channel) => handlers.onMessage(channel, message);
  const cluster = typeof (subscriber as Partial<Cluster>).getSlotMaster === 'function';
  let connectedBefore = false;
  let closed = false;
  subscriber.on('error', handlers.onError);
  // node-redis subscribes again by itself after a reconnection; releases published meanwhile went unheard.
  if (!cluster) {
    subscriber.on('ready', () => {
      if (connectedBefore && !closed) handlers.onReconnected();
      connectedBefore = true;
    });
  }
  const connecting = subscriber.connect().then(
    () => undefined,
    (error: unknown) => {
      if (!closed) handlers.onError(mapNodeRedisError(error));
    },
  );
  const isReady = () => (cluster ? subscriber.isOpen : (subscriber as Client).isReady);
  const port: SubscriberPort = {
    get listening() {
      return !closed && isReady();
    },
    whenReady: (timeoutMs) => withTimeout(connecting, timeoutMs),
    subscribe: async (channel, sharded) => {
      await (sharded ? subscriber.sSubscribe(channel, listener) : subscriber.subscribe(channel, listener)).catch((error: unknown) =>
        Promise.reject(mapNodeRedisError(error)),
      );
    },
    unsubscribe: async (channel, sharded) => {
      await (sharded ? subscriber.sUnsubscribe(channel, listener) : subscriber.unsubscribe(channel, listener));
    },
    close: () => {
      closed = true;
      // Closed without waiting for its replies: nothing of it is needed any more.
      if (subscriber.destroy) subscriber.destroy();
      else subscriber.disconnect?.().catch(() => undefined);
      subscriber.off('error', handlers.onError);
      subscriber.on('error', () => undefined);
    },
  };
  return { port, cluster: cluster ? (subscriber as Cluster) : undefined };
}

/**
 * A Sentinel has no `duplicate()`: node-redis keeps its pub/sub on a
 * connection of its own, apart from the commands, and follows failovers with
 * it. holdfast subscribes there with a listener of its own, and removes only
 * that listener.
 */
function sharedSubscriber(redis: Sentinel, handlers: SubscriberHandlers): SubscriberPort {
  const listener: PubSubListener = (message, channel) => handlers.onMessage(channel, message);
  const channels = new Map<string, boolean>();
  let closed = false;
  return {
    get listening() {
      return !closed && redis.isReady;
    },
    whenReady: () => Promise.resolve(),
    subscribe: async (channel, sharded) => {
      channels.set(channel, sharded);
      await (sharded ? redis.sSubscribe(channel, listener) : redis.subscribe(channel, listener)).catch((error: unknown) =>
        Promise.reject(mapNodeRedisError(error)),
      );
    },
    unsubscribe: async (channel, sharded) => {
      channels.delete(channel);
      await (sharded ? redis.sUnsubscribe(channel, listener) : redis.unsubscribe(channel, listener));
    },
    close: () => {
      closed = true;
      for (const [channel, sharded] of channels) {
        (sharded ? redis.sUnsubscribe(channel, listener) : redis.unsubscribe(channel, listener)).catch(() => undefined);
      }
      channels.clear();
    },
  };
}
