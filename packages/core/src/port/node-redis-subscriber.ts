import { slotOf } from '../keys/keys.js';
import { withTimeout } from './redis-call.js';
import type { Client, Cluster, PubSubListener, Sentinel } from './node-redis-types.js';
import { mapNodeRedisError } from './errors.js';
import type { SubscriberHandlers, SubscriberPort } from './port.js';

/**
 * holdfast's subscribers over node-redis, made by node-redis.ts: a duplicate
 * of a client, a Cluster's duplicate that follows the application's slot
 * map, or a Sentinel's own pub/sub connection.
 */

/** A subscriber on a duplicate holdfast owns (client or Cluster), connected at once. */
export function duplicateSubscriber(subscriber: Client | Cluster, handlers: SubscriberHandlers): { port: SubscriberPort; cluster: Cluster | undefined } {
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
export function sharedSubscriber(redis: Sentinel, handlers: SubscriberHandlers): SubscriberPort {
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

/** How often a Cluster subscriber compares its slot map with the application client's. */
const TOPOLOGY_CHECK_MS = 250;

/** The Cluster slot of a channel or key: its hash tag's, when it has one (Redis's rule). */
export function clusterSlot(name: string): number {
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
export function clusterSubscriber(redis: Cluster, handlers: SubscriberHandlers): SubscriberPort {
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
