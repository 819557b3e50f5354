import { withTimeout } from './redis-call.js';
import type { RedisClientLike, RedisClusterLike } from './redis-like.js';
import type { SubscriberHandlers, SubscriberPort } from './port.js';

/** An ioredis client or Cluster (ioredis.ts's own alias, repeated so the two files do not import each other). */
type RedisLike = RedisClientLike | RedisClusterLike;

/**
 * holdfast's subscriber over an ioredis (or iovalkey) client, made by
 * ioredis.ts: a duplicate of the user's client (`cluster`: a Cluster, as the
 * port detected), without its `keyPrefix`: channel names are passed in full
 * (see LockKeys.channel), and messages come back under them.
 */
export function ioredisSubscriber(redis: RedisLike, cluster: boolean, handlers: SubscriberHandlers): SubscriberPort {
  let subscriber: RedisLike;
  let onRefresh: (() => void) | undefined;
  let followTimer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  if (cluster) {
    // A Cluster needs one sharded subscriber per primary: ioredis keeps them,
    // and moves subscriptions when it sees the slot map change, with
    // `shardedSubscribers`. A subscriber sends no keyed command, so it never
    // meets a MOVED itself: it refreshes its map whenever the user's client does.
    const sharded = (redis as RedisClusterLike).duplicate([], {
      shardedSubscribers: true,
      keyPrefix: '',
      redisOptions: { ...(redis as RedisClusterLike).options.redisOptions, keyPrefix: '' },
    });
    // The subscriber asks one node at random for the slot map. Right after a
    // failover or a migration that node may not have heard of it yet (the
    // cluster's gossip lags), and the subscriber would stay on the old
    // primary until the next change: ask again, a little later, until its map
    // agrees with the user's client on who serves each slot (a few times at most).
    const follow = (attempt: number) =>
      sharded.refreshSlotsCache(() => {
        if (closed || attempt >= FOLLOW_ATTEMPTS || sameOwners((redis as RedisClusterLike).slots, sharded.slots)) return;
        followTimer = setTimeout(() => follow(attempt + 1), Math.min(FOLLOW_DELAY_MS * (attempt + 1), FOLLOW_MAX_DELAY_MS));
        followTimer.unref();
      });
    onRefresh = () => {
      clearTimeout(followTimer);
      follow(1);
    };
    redis.on('refresh', onRefresh);
    subscriber = sharded;
  } else {
    // ioredis's own resubscription after a reconnection leaves its promise
    // unhandled (an unhandled rejection when the connection drops again
    // meanwhile): Waiters sends the same subscriptions and handles failures.
    subscriber = (redis as RedisClientLike).duplicate({ keyPrefix: '', autoResubscribe: false });
  }
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
    whenReady: (timeoutMs) => {
      if (cluster || subscriber.status === 'ready') return Promise.resolve();
      // A duplicate of a client made with `lazyConnect` is lazy too: it would
      // wait for a ready that nothing starts. Its failures reach 'error'.
      if (subscriber.status === 'wait') (subscriber as { connect?: () => Promise<unknown> }).connect?.().catch(() => undefined);
      return nextReady(subscriber, timeoutMs);
    },
    subscribe: async (channel, sharded) => {
      await (sharded ? subscriber.ssubscribe(channel) : subscriber.subscribe(channel));
    },
    unsubscribe: async (channel, sharded) => {
      await (sharded ? subscriber.sunsubscribe(channel) : subscriber.unsubscribe(channel));
    },
    close: () => {
      closed = true;
      clearTimeout(followTimer);
      if (onRefresh) redis.off('refresh', onRefresh);
      subscriber.disconnect();
    },
  };
}

/**
 * How many times, and how far apart (ms, growing to at most a second), a
 * sharded subscriber asks again for a slot map that disagrees: about 25 s in
 * all. The earlier 4.5 s once left the subscriber on the old primary after a
 * failover, in a test run on a loaded machine (the cluster's gossip lagged).
 */
const FOLLOW_ATTEMPTS = 30;
const FOLLOW_DELAY_MS = 100;
const FOLLOW_MAX_DELAY_MS = 1_000;

/** True when both slot maps name the same primary for every slot. */
function sameOwners(a: RedisClusterLike['slots'], b: RedisClusterLike['slots']): boolean {
  for (let slot = 0; slot < 16_384; slot++) if (a[slot]?.[0] !== b[slot]?.[0]) return false;
  return true;
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
