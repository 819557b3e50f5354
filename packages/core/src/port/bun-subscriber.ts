import { mapBunError, noShardedPubSub } from './bun-errors.js';
import { withTimeout } from './redis-call.js';
import type { SubscriberHandlers, SubscriberPort } from './port.js';
import type { BunRedisClientLike } from './redis-like.js';

/**
 * holdfast's subscriber over Bun's `RedisClient`, made by bun.ts: a
 * `duplicate()` of the application's client (its URL and options, a
 * connection of its own), which close() closes; the application's client is
 * never touched.
 *
 * Bun reconnects a lost connection by itself but does not subscribe again,
 * and keeps the listeners of the old subscriptions (a SUBSCRIBE sent again
 * would add a second one: every message twice). So a subscriber connection
 * that was lost is replaced: when Bun reports it connected again
 * (`onconnect`) or closed for good (`onclose`: out of `maxRetries`), it is
 * closed and a fresh duplicate made, retried with backoff while the server
 * cannot be reached; once it is connected, `onReconnected` has Waiters send
 * every subscription again and look at every lock it waits for (a release
 * published meanwhile went unheard).
 *
 * Bun has no sharded pub/sub: a sharded subscribe is refused as an unknown
 * command, which switches Waiters to classic SUBSCRIBE for good, and the
 * scripts PUBLISH to classic subscribers (`_publish.lua`).
 */

/** The first wait before making a lost subscriber again, doubled up to RETRY_MAX_MS while it fails. */
const RETRY_MIN_MS = 50;
const RETRY_MAX_MS = 2_000;

/** One duplicate of holdfast's. */
interface Made {
  readonly ready: Promise<BunRedisClientLike>;
  client: BunRedisClientLike | undefined;
  /** Replaced or closed: nothing it reports is heard any more. */
  dropped: boolean;
  /** The channels subscribed on this connection. */
  readonly channels: Set<string>;
}

export function bunSubscriber(bun: BunRedisClientLike, handlers: SubscriberHandlers): SubscriberPort {
  let closed = false;
  let retryMs = RETRY_MIN_MS;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** An error was reported since the last connection that worked: later failures of the same outage are not. */
  let reported = false;
  const onMessage = (message: string, channel: string) => {
    if (!closed) handlers.onMessage(channel, message);
  };

  const make = (replacing: boolean): Made => {
    const made: Made = { ready: undefined as unknown as Promise<BunRedisClientLike>, client: undefined, dropped: false, channels: new Set() };
    (made as { ready: Promise<BunRedisClientLike> }).ready = Promise.resolve()
      .then(() => bun.duplicate() as Promise<BunRedisClientLike>)
      // A duplicate of a client that has not connected yet is not connected either: connected
      // here, so that its `onconnect` reports reconnections only.
      .then((client) =>
        client.connected
          ? client
          : client.connect().then(
              () => client,
              (error: unknown) => {
                client.close();
                throw error;
              },
            ),
      )
      .then(
        (client) => {
          if (closed || made.dropped) {
            client.close();
            return client;
          }
          made.client = client;
          client.onconnect = () => lost(made);
          client.onclose = () => lost(made);
          retryMs = RETRY_MIN_MS;
          reported = false;
          if (replacing) handlers.onReconnected();
          return client;
        },
        (error: unknown) => {
          const mapped = mapBunError(error);
          if (!closed && !made.dropped) {
            if (!reported) handlers.onError(mapped);
            reported = true;
            schedule(replacing);
          }
          throw mapped;
        },
      );
    made.ready.catch(() => undefined);
    return made;
  };
  const drop = (made: Made) => {
    made.dropped = true;
    const client = made.client;
    if (!client) return;
    client.onconnect = null;
    client.onclose = null;
    client.close();
  };
  const schedule = (replacing: boolean) => {
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      if (!closed) current = make(replacing);
    }, retryMs);
    retryTimer.unref?.();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };
  /** The connection of `made` was lost (and perhaps made again by Bun, without its subscriptions): replace it. */
  const lost = (made: Made) => {
    if (closed || made.dropped || made !== current) return;
    drop(made);
    current = make(true);
  };
  let current = make(false);

  return {
    get listening() {
      return !closed && current.client?.connected === true;
    },
    whenReady: (timeoutMs) => withTimeout(current.ready.then(() => undefined), timeoutMs),
    subscribe: async (channel, sharded) => {
      if (sharded) throw noShardedPubSub();
      const made = current;
      const client = await made.ready;
      // Already subscribed on this connection: a second SUBSCRIBE would add a second listener.
      if (made.channels.has(channel)) return;
      await client.subscribe(channel, onMessage).catch((error: unknown) => Promise.reject(mapBunError(error)));
      made.channels.add(channel);
    },
    unsubscribe: async (channel) => {
      const made = current;
      if (!made.channels.delete(channel)) return;
      const client = await made.ready;
      await client.unsubscribe(channel, onMessage).catch((error: unknown) => Promise.reject(mapBunError(error)));
    },
    close: () => {
      closed = true;
      clearTimeout(retryTimer);
      drop(current);
    },
  };
}
