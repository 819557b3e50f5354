import { clientMode, nodeRedisMajor } from '@holdfast/test-utils';

/** The client libraries a port is made over. */
export type Flavour = 'ioredis-5' | 'ioredis-6' | 'node-redis-5' | 'node-redis-6' | 'iovalkey';

/** Where the clients differ, as the port exposes it (one row per difference). */
export interface Behaviour {
  readonly kind: 'ioredis' | 'node-redis';
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
};

/** The client the harness gives in this vitest pass (see vitest.config.ts). */
export const passFlavour: Flavour =
  clientMode === 'node-redis' ? `node-redis-${nodeRedisMajor}` : process.env.HOLDFAST_IOREDIS === '6' ? 'ioredis-6' : 'ioredis-5';
