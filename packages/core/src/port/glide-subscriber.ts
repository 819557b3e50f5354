import { RedisTimeoutError } from '../errors/errors.js';
import { GlideReplyError, mapGlideError } from './glide-errors.js';
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
 * in that gap is heard at most that much later.
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

/** holdfast's subscriber client, made like the application's `glide`; connects at once. */
export function glideSubscriber(glide: GlideClientLike, cluster: boolean, handlers: SubscriberHandlers): SubscriberPort {
  const requestTimeoutMs = glide.requestTimeout ?? 250;
  const channels = new Map<string, boolean>();
  let closed = false;
  let sub: GlideClientLike | undefined;
  const callback = (message: GlidePubSubMessage) => {
    if (!closed) handlers.onMessage(String(message.channel), String(message.message));
  };
  const made = (glide.constructor as unknown as GlideClientClass).createClient({
    ...glide.config,
    lazyConnect: false,
    pubsubSubscriptions: { channelsAndPatterns: {}, callback },
  });
  const ready = made.then(
    (client) => {
      if (closed) client.close();
      else sub = client;
      return client;
    },
    (error: unknown) => {
      const mapped = mapGlideError(error, requestTimeoutMs);
      if (!closed) handlers.onError(mapped);
      throw mapped;
    },
  );
  ready.catch(() => undefined);

  let ids: string | undefined;
  let checking = false;
  const check = () => {
    if (checking || !sub || channels.size === 0) return;
    checking = true;
    connectionIds(sub, cluster).then(
      (now) => {
        checking = false;
        const before = ids;
        ids = now;
        if (before !== undefined && before !== now && !closed) handlers.onReconnected();
      },
      () => {
        // No answer (the connection is down, or being made again): the ids, once read again, tell.
        checking = false;
      },
    );
  };
  const timer = setInterval(check, RECONNECT_CHECK_MS);
  timer.unref();

  const request = async (channel: string, sharded: boolean, subscribing: boolean): Promise<void> => {
    if (sharded && !cluster) throw noShardedPubSub();
    const client = await ready;
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
      return !closed && sub !== undefined && sub.isClosed !== true;
    },
    whenReady: (timeoutMs) => withTimeout(ready.then(() => undefined), timeoutMs),
    subscribe: async (channel, sharded) => {
      channels.set(channel, sharded);
      await request(channel, sharded, true);
      // The first subscription: the ids to compare with from now on.
      if (ids === undefined) check();
    },
    unsubscribe: async (channel, sharded) => {
      channels.delete(channel);
      await request(channel, sharded, false);
    },
    close: () => {
      closed = true;
      clearInterval(timer);
      channels.clear();
      sub?.close();
    },
  };
}
