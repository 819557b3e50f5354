import { RedisTimeoutError } from '../errors/errors.js';
import { GlideReplyError, mapGlideError } from './glide-errors.js';
import { clusterSlot } from './node-redis-subscriber.js';
import { withTimeout } from './redis-call.js';
import type { GlideClientClass, GlideClientLike, GlidePubSubMessage } from './glide-types.js';
import type { SubscriberHandlers, SubscriberPort } from './port.js';

/**
 * holdfast's subscriber over GLIDE, made by glide.ts. GLIDE has no
 * `duplicate()`, and the application's own client cannot serve: GLIDE hands
 * a client's pub/sub messages to one callback, fixed when the client is made,
 * or to whoever polls `getPubSubMessage()`, so holdfast would take the
 * application's messages. holdfast makes a client of its own instead, of the
 * application's client's class with its configuration (addresses,
 * credentials, TLS, database, timeouts) and a callback of holdfast's; it is
 * closed by close(), and the application's client is never touched.
 *
 * GLIDE subscribes again by itself after a reconnection, and says nothing of
 * it: messages published meanwhile are lost. The subscriber asks for its
 * connections' `CLIENT ID` every RECONNECT_CHECK_MS while it has
 * subscriptions; an id that changed is a reconnection (`onReconnected`, on
 * which Waiters looks at every lock it waits for again). A release published
 * in that gap is heard at most that much later. A check that fails (the
 * connection is down: GLIDE's `ConnectionError`, or its `TimeoutError` while
 * it reconnects) is the subscriber's connection failure (`onError`), once per
 * outage: GLIDE itself reports none.
 *
 * A standalone GLIDE client has no sharded pub/sub (`SSUBSCRIBE` through
 * `customCommand` subscribes to nothing): a sharded subscribe is refused as
 * an unknown command, which switches Waiters to classic pub/sub for good
 * (the scripts then `PUBLISH`).
 */

/** How often a subscriber with subscriptions checks its connection ids. */
const RECONNECT_CHECK_MS = 250;
/**
 * How long one SUBSCRIBE is waited for. GLIDE reports no refusal (an ACL
 * without pub/sub): it resends the subscription until the timeout, which then
 * drops it.
 */
const SUBSCRIBE_TIMEOUT_MS = 10_000;
/** GLIDE's `Decoder.String`. */
const STRING_DECODER = 1;

/** The refusal Waiters reads as "no sharded pub/sub here: use classic". */
function noShardedPubSub(): GlideReplyError {
  return new GlideReplyError("ERR unknown command 'SSUBSCRIBE': a standalone GLIDE client has no sharded pub/sub (holdfast's scripts PUBLISH instead)");
}

/** The connection ids of a subscriber client, as one comparable string (a Cluster: each primary's). */
async function connectionIds(sub: GlideClientLike, cluster: boolean): Promise<string> {
  const reply = await sub.customCommand(['CLIENT', 'ID'], cluster ? { route: 'allPrimaries', decoder: STRING_DECODER } : { decoder: STRING_DECODER });
  if (reply === null || typeof reply !== 'object') return String(reply);
  const entries = Array.isArray(reply)
    ? (reply as { key: unknown; value: unknown }[]).map((e) => [String(e.key), String(e.value)])
    : Object.entries(reply as Record<string, unknown>).map(([k, v]) => [k, String(v)]);
  return entries.sort(([a], [b]) => (a! < b! ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(' ');
}

/** One subscriber client of holdfast's, made like the application's `glide`, connecting at once. */
interface Made {
  readonly ready: Promise<GlideClientLike>;
  client: GlideClientLike | undefined;
  closed: boolean;
}

/**
 * holdfast's subscriber client, made like the application's `glide`; connects at once. On a
 * Cluster, `nodeOf` is the port's slot map: when a subscribed channel's slot is served by
 * another primary than when it was subscribed (a failover, a migration), the client is made
 * again and every subscription is sent again (`onReconnected`), as GLIDE keeps a sharded
 * subscription where it was made.
 */
export function glideSubscriber(
  glide: GlideClientLike,
  cluster: boolean,
  handlers: SubscriberHandlers,
  nodeOf: (slot: number) => string | undefined = () => undefined,
): SubscriberPort {
  const requestTimeoutMs = glide.requestTimeout ?? 250;
  const channels = new Map<string, boolean>();
  /** A sharded channel's primary when it was subscribed. */
  const owners = new Map<string, string | undefined>();
  let closed = false;
  const make = (): Made => {
    const made: Made = { ready: undefined as unknown as Promise<GlideClientLike>, client: undefined, closed: false };
    const callback = (message: GlidePubSubMessage) => {
      if (!closed && !made.closed) handlers.onMessage(String(message.channel), String(message.message));
    };
    const creating = (glide.constructor as unknown as GlideClientClass).createClient({
      ...glide.config,
      lazyConnect: false,
      pubsubSubscriptions: { channelsAndPatterns: {}, callback },
    });
    (made as { ready: Promise<GlideClientLike> }).ready = creating.then(
      (client) => {
        if (made.closed) client.close();
        else made.client = client;
        return client;
      },
      (error: unknown) => {
        const mapped = mapGlideError(error, requestTimeoutMs);
        if (!closed && !made.closed) handlers.onError(mapped);
        throw mapped;
      },
    );
    made.ready.catch(() => undefined);
    return made;
  };
  const drop = (made: Made) => {
    made.closed = true;
    made.client?.close();
  };
  let current = make();

  let ids: string | undefined;
  let checking = false;
  /** A failed check was reported (`onError`) and no check has answered since. */
  let down = false;
  const moved = (): boolean => {
    for (const [channel, owner] of owners) {
      const now = nodeOf(clusterSlot(channel));
      if (owner === undefined) owners.set(channel, now);
      else if (now !== undefined && now !== owner) return true;
    }
    return false;
  };
  const check = () => {
    const sub = current.client;
    if (checking || !sub || channels.size === 0) return;
    if (cluster && moved()) {
      drop(current);
      current = make();
      ids = undefined;
      owners.clear();
      current.ready.then(
        () => !closed && handlers.onReconnected(),
        () => undefined,
      );
      return;
    }
    checking = true;
    connectionIds(sub, cluster).then(
      (now) => {
        checking = false;
        down = false;
        const before = ids;
        ids = now;
        if (before !== undefined && before !== now && !closed) handlers.onReconnected();
      },
      (error: unknown) => {
        // No answer (the connection is down, or being made again): the ids, once read again, tell
        // whether it was made again; the outage is reported once.
        checking = false;
        if (down || closed) return;
        down = true;
        // GLIDE's own error (a timeout here is the connection's, not a call holdfast gave up on):
        // Waiters reports it as the pub/sub connection's failure.
        handlers.onError(error);
      },
    );
  };
  const timer = setInterval(check, RECONNECT_CHECK_MS);
  timer.unref();

  const request = async (channel: string, sharded: boolean, subscribing: boolean): Promise<void> => {
    if (sharded && !cluster) throw noShardedPubSub();
    const client = await current.ready;
    const set = new Set([channel]);
    try {
      if (!subscribing) await (sharded ? client.sunsubscribe!(set, SUBSCRIBE_TIMEOUT_MS) : client.unsubscribe(set, SUBSCRIBE_TIMEOUT_MS));
      else await (sharded ? client.ssubscribe!(set, SUBSCRIBE_TIMEOUT_MS) : client.subscribe(set, SUBSCRIBE_TIMEOUT_MS));
    } catch (error) {
      const mapped = mapGlideError(error, requestTimeoutMs);
      // A subscription not confirmed in time is dropped, so GLIDE stops resending it.
      if (subscribing && mapped instanceof RedisTimeoutError) {
        (sharded ? client.sunsubscribeLazy?.(set) : client.unsubscribeLazy?.(set))?.catch(() => undefined);
      }
      throw mapped;
    }
  };

  return {
    get listening() {
      return !closed && current.client !== undefined && current.client.isClosed !== true;
    },
    whenReady: (timeoutMs) => withTimeout(current.ready.then(() => undefined), timeoutMs),
    subscribe: async (channel, sharded) => {
      channels.set(channel, sharded);
      if (sharded) owners.set(channel, nodeOf(clusterSlot(channel)));
      await request(channel, sharded, true);
      // The first subscription: the ids to compare with from now on.
      if (ids === undefined) check();
    },
    unsubscribe: async (channel, sharded) => {
      channels.delete(channel);
      owners.delete(channel);
      await request(channel, sharded, false);
    },
    close: () => {
      closed = true;
      clearInterval(timer);
      channels.clear();
      owners.clear();
      drop(current);
    },
  };
}
