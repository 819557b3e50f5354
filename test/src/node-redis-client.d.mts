import type { RedisOptions } from 'ioredis';

/** Which client library the pass runs holdfast on. */
export declare const clientMode: 'ioredis' | 'node-redis' | 'glide';

/** The node-redis major of the pass (5 unless HOLDFAST_NODE_REDIS=6). */
export declare const nodeRedisMajor: '5' | '6';

/** What the tests use of the `redis` package (its own types differ between majors). */
export interface NodeRedisPackage {
  createClient(options?: object): NodeRedisAny;
  createCluster(options: object): NodeRedisAny;
  createSentinel(options: object): NodeRedisAny;
}

/** A node-redis client, Cluster or Sentinel, loosely typed (the tests only forward to it). */
export type NodeRedisAny = Record<string, any> & {
  connect(): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  destroy?(): unknown;
  close?(): Promise<unknown>;
};

/** The `redis` package of a major: `redis` (5) or the `redis6` alias. */
export declare function nodeRedis(major?: '5' | '6'): NodeRedisPackage;

/** node-redis's socket options for what a test asked of ioredis. */
export declare function socketOptions(options: RedisOptions): Record<string, unknown>;

/** node-redis client options (besides where it connects) for what a test asked of ioredis. */
export declare function clientOptions(options: RedisOptions): Record<string, unknown>;

/**
 * A node-redis client (of the pass's major, not yet connected) to `target`
 * (a redis:// URL or host and port) with `options` (ioredis options) translated.
 */
export declare function createNodeRedisClient(
  target: string | { host: string; port: number },
  options?: RedisOptions,
): NodeRedisAny;
