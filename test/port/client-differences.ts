import { clientMode, nodeRedisMajor } from '@holdfast/test-utils';

/** The client libraries a port is made over. */
export type Flavour = 'ioredis-5' | 'ioredis-6' | 'node-redis-5' | 'node-redis-6' | 'iovalkey' | 'glide' | 'bun';

/** Where the clients differ, as the port exposes it (one row per difference). */
export interface Behaviour {
  readonly kind: 'ioredis' | 'node-redis' | 'glide' | 'bun';
  /** The protocol the client speaks by default (`resp=` in CLIENT LIST). */
  readonly resp: 2 | 3;
  /** `lazyConnect`: ioredis waits (`wait`) for the first command; node-redis has no lazy state (the application connects). */
  readonly lazyStatus: 'wait' | 'none';
  /** A command whose reply was lost with its connection: ioredis resends it at reconnection, node-redis rejects it. */
  readonly resendsUnanswered: boolean;
  /** Its subscriber subscribes again by itself after a reconnection (ioredis's is made with `autoResubscribe: false`). */
  readonly resubscribesItself: boolean;
  /** A call after the application closed the client: a connection failure (retried), or RedisUnreachableError `end`. */
  readonly afterClose: 'connection-failure' | 'unreachable-end';
  /** The client honours ioredis's `keyPrefix`, which the port reports. */
  readonly keyPrefix: boolean;
  /** A Cluster client's status once the application closed it: ioredis reports `end`, then `close` again as its node pool drains. */
  readonly clusterClosedStatus: 'close' | 'end';
  /** A Cluster client reports `refresh` when its slot map changed. */
  readonly refreshEvent: boolean;
  /** The client has an option to fail commands at once while disconnected (ioredis `enableOfflineQueue`, node-redis `disableOfflineQueue`). */
  readonly offlineQueueOption: boolean;
  /** A standalone client's subscriber has sharded pub/sub; without it a sharded subscribe is refused as an unknown command (Waiters then uses classic pub/sub and the scripts PUBLISH). */
  readonly shardedStandalone: boolean;
  /**
   * Where the port's `close`/`ready` come from: the client's own connection events, or (GLIDE has
   * none) the calls: `close` when a call fails with the connection, `ready` at the next reply.
   */
  readonly connectionEvents: 'client' | 'calls';
  /** The port knows where a standalone client connects (`endpoint`, the primary's `address`); Bun's client shows neither its URL nor its database. */
  readonly endpoint: boolean;
  /** A client the application closed is seen as such by status() at once, or (Bun's client shows nothing of it) once a call found it closed. */
  readonly closedSeenBy: 'status' | 'call';
  /** A call made while the server is down: kept until it is back (offline queue), or failed at the client's request timeout (RedisTimeoutError). */
  readonly whileDown: 'queued' | 'request-timeout';
  /**
   * A subscribe the ACL refuses: rejected with the server's NOPERM reply, or (GLIDE resends it and
   * reports nothing) never confirmed, ended by the caller's deadline. `wait: 'auto'` turns to
   * spinning on either (Waiters: a timed-out subscribe while the server answers a read).
   */
  readonly subscribeRefused: 'reply' | 'unconfirmed';
}

const IOREDIS = {
  kind: 'ioredis',
  lazyStatus: 'wait',
  resendsUnanswered: true,
  resubscribesItself: false,
  afterClose: 'connection-failure',
  keyPrefix: true,
  clusterClosedStatus: 'close',
  refreshEvent: true,
  offlineQueueOption: true,
  shardedStandalone: true,
  connectionEvents: 'client',
  whileDown: 'queued',
  closedSeenBy: 'status',
  endpoint: true,
  subscribeRefused: 'reply',
} as const;
const NODE_REDIS = {
  kind: 'node-redis',
  lazyStatus: 'none',
  resendsUnanswered: false,
  resubscribesItself: true,
  afterClose: 'unreachable-end',
  keyPrefix: false,
  clusterClosedStatus: 'end',
  refreshEvent: false,
  offlineQueueOption: true,
  shardedStandalone: true,
  connectionEvents: 'client',
  whileDown: 'queued',
  closedSeenBy: 'status',
  endpoint: true,
  subscribeRefused: 'reply',
} as const;
/**
 * Valkey GLIDE 2.x: RESP3 only; a lost reply is not resent (ConnectionError); its subscriber
 * (a client holdfast makes of the application's class and configuration) subscribes again by
 * itself; a closed client answers ClosingError (RedisUnreachableError `end`); no key prefix, no
 * lazy state the port shows, no offline-queue option (a request waits up to `requestTimeout`,
 * then TimeoutError), no connection events, no sharded pub/sub on a standalone client.
 */
const GLIDE = {
  kind: 'glide',
  resp: 3,
  lazyStatus: 'none',
  resendsUnanswered: false,
  resubscribesItself: true,
  afterClose: 'unreachable-end',
  keyPrefix: false,
  clusterClosedStatus: 'end',
  refreshEvent: true,
  offlineQueueOption: false,
  shardedStandalone: false,
  connectionEvents: 'calls',
  whileDown: 'request-timeout',
  closedSeenBy: 'status',
  endpoint: true,
  subscribeRefused: 'unconfirmed',
} as const;

/**
 * Bun's built-in `RedisClient` (Bun 1.4): RESP3 only; a lost reply is not resent; its subscriber
 * (a `duplicate()` holdfast replaces after a loss, as Bun subscribes nothing again) is subscribed
 * again by Waiters; a closed client answers `Connection has failed` (RedisUnreachableError `end`);
 * no key prefix, no lazy state the port shows (it connects at its first command), no offline-queue
 * option the port can read, no connection events holdfast may listen to, no sharded pub/sub, no
 * command timeout (a call to a stopped server stays pending: core's `commandTimeoutMs` bounds it).
 */
const BUN = {
  kind: 'bun',
  resp: 3,
  lazyStatus: 'none',
  resendsUnanswered: false,
  resubscribesItself: false,
  afterClose: 'unreachable-end',
  keyPrefix: false,
  clusterClosedStatus: 'end',
  refreshEvent: false,
  offlineQueueOption: false,
  shardedStandalone: false,
  connectionEvents: 'calls',
  whileDown: 'queued',
  closedSeenBy: 'call',
  endpoint: false,
  subscribeRefused: 'reply',
} as const;

/**
 * THE table of per-client differences: every branch on the client in this folder reads it.
 * Replies are alike in all (RESP2 or RESP3): integers as numbers, arrays, nil as null.
 */
export const CLIENT_DIFFERENCES: Record<Flavour, Behaviour> = {
  'ioredis-5': { ...IOREDIS, resp: 2 },
  'ioredis-6': { ...IOREDIS, resp: 3 },
  iovalkey: { ...IOREDIS, resp: 2 },
  'node-redis-5': { ...NODE_REDIS, resp: 2 },
  'node-redis-6': { ...NODE_REDIS, resp: 3 },
  glide: GLIDE,
  bun: BUN,
};

/** The client the harness gives in this vitest pass (see vitest.config.ts). */
export const passFlavour: Flavour =
  clientMode === 'node-redis'
    ? `node-redis-${nodeRedisMajor}`
    : clientMode === 'glide'
      ? 'glide'
      : process.env.HOLDFAST_IOREDIS === '6'
        ? 'ioredis-6'
        : 'ioredis-5';
