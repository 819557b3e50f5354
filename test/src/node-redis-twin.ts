import type { NodeRedisAny } from './node-redis-client.mjs';

/**
 * The node-redis pass (HOLDFAST_CLIENT=node-redis, HOLDFAST_NODE_REDIS=5|6):
 * the same suites, with holdfast running on node-redis clients.
 *
 * Tests are written against ioredis (`redis.hgetall(...)`, `redis.info(...)`,
 * `redis.call(...)`), and hand the same object to holdfast. In this pass
 * every client the harness creates is a twin: an ioredis client for the
 * test's own commands, and a node-redis client (of the chosen major, to the
 * same server, with the options translated) that holdfast detects and runs
 * on. The node-redis side is created when holdfast first looks at the
 * client, so admin clients never open it. Closing the twin closes both.
 */

// Shared with the processes the suite starts (chaos workers, examples): see node-redis-client.mjs.
export { clientMode, clientOptions, createNodeRedisClient, nodeRedis, nodeRedisMajor, socketOptions } from './node-redis-client.mjs';
export type { NodeRedisAny, NodeRedisPackage } from './node-redis-client.mjs';

/** Members holdfast reads of a node-redis client, Cluster or Sentinel: served by the node-redis side. */
const NODE_REDIS_MEMBERS = new Set([
  'isOpen', 'isReady', 'sendCommand', 'duplicate', 'sSubscribe', 'sUnsubscribe',
  'getSlotMaster', 'masters', 'nodeClient', 'getMasterNode', 'use', 'destroy', 'close',
]);

/** node-redis events; every other event (`close`, `end`, `refresh`, `message`, ...) is ioredis's. */
const NODE_REDIS_EVENTS = new Set([
  'ready', 'reconnecting', 'connect', 'node-ready', 'node-reconnecting', 'node-connect',
  'node-disconnect', 'node-error', 'disconnect', 'topology-change', 'client-error', 'sharded-channel-moved',
]);

const LISTENER_METHODS = new Set(['on', 'once', 'off', 'addListener', 'removeListener', 'prependListener']);

/** The twin of `io`: see the file's comment. `make` creates the node-redis side (not yet connected). */
export function twin<T extends object>(io: T, make: () => NodeRedisAny): T {
  let node: NodeRedisAny | undefined;
  let closed = false;
  const nodeSide = (): NodeRedisAny => {
    if (!node) {
      node = make();
      node.on('error', () => undefined);
      // Connected at once, as an application hands holdfast a connected client.
      if (!closed) node.connect().catch(() => undefined);
    }
    return node;
  };
  const closeNode = () => {
    closed = true;
    if (!node) return;
    const n = node;
    // node-redis throws at once ("The client is closed") when it was closed already.
    if (!n.isOpen) return;
    try {
      if (typeof n.destroy === 'function') Promise.resolve(n.destroy()).catch(() => undefined);
      else n.close?.().catch(() => undefined);
    } catch {
      // Closed meanwhile: nothing left to close.
    }
  };
  const ioSide = io as Record<string | symbol, any>;
  return new Proxy(io, {
    get(target, prop, receiver) {
      if (typeof prop === 'string') {
        if (NODE_REDIS_MEMBERS.has(prop)) {
          const n = nodeSide();
          const value = n[prop];
          return typeof value === 'function' ? value.bind(n) : value;
        }
        if (prop === 'status') {
          // Tests wait for `status === 'ready'` to mean "the client holdfast runs on
          // is connected": once holdfast runs on the node-redis side, it is ready
          // only when that side is too (it reconnects on its own schedule).
          const status = ioSide.status as string;
          return status === 'ready' && node && node.isReady === false ? 'connect' : status;
        }
        if (prop === 'options') {
          return node ? { ...ioSide.options, ...node.options } : ioSide.options;
        }
        if (LISTENER_METHODS.has(prop)) {
          return (event: string, listener: (...args: any[]) => void) => {
            // `error`: the node-redis side has a listener of its own from its start.
            if (NODE_REDIS_EVENTS.has(event)) nodeSide()[prop](event, listener);
            else if (event === 'error' && node) node[prop](event, listener);
            if (!NODE_REDIS_EVENTS.has(event)) ioSide[prop](event, listener);
            return receiver;
          };
        }
        if (prop === 'listenerCount') {
          // `error`: the node-redis side's own, once it exists (holdfast listens there).
          return (event: string) =>
            (NODE_REDIS_EVENTS.has(event) || (event === 'error' && node) ? nodeSide() : ioSide).listenerCount(event);
        }
        if (prop === 'disconnect' || prop === 'quit') {
          return (...args: unknown[]) => {
            closeNode();
            return ioSide[prop](...args);
          };
        }
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
