/**
 * The clients holdfast runs on, by shape rather than by class: the few
 * members it calls. ioredis 5 and 6 and iovalkey (the ioredis fork for
 * Valkey) all have the first ones, node-redis 5 and 6 the `NodeRedis…Like`
 * ones; neither package is imported (both are optional peer dependencies); naming one library's classes would turn away the
 * others ("Type 'Redis' is missing the following properties from type
 * 'Redis': _connect, …"), however alike they are at runtime.
 */

/** Listener of a client event; the arguments depend on the event (`any`, as Node's EventEmitter has them). */
export type RedisEventListener = (...args: any[]) => void;

/** The members holdfast uses on both a standalone and a Cluster client. */
export interface RedisCommandsLike {
  /** Connection state: holdfast waits for `ready` before subscribing. */
  readonly status: string;
  /** `EVALSHA sha numkeys ...keys ...args`. */
  evalsha(sha: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** `EVAL script numkeys ...keys ...args`, after a `NOSCRIPT`. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** A pipeline: a script and its `WAIT` in one round trip (`minReplicas`). */
  pipeline(): RedisPipelineLike;
  /** `HMGET` (readFenced). */
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  /** `SET key value EX seconds`: the client registration (see client-registry.ts). */
  set(key: string, value: string, mode: 'EX', seconds: number): Promise<unknown>;
  /** `DEL key`: the client registration, at `close()`. */
  del(...keys: string[]): Promise<unknown>;
  /** `SSUBSCRIBE` on the subscriber connection holdfast duplicates. */
  ssubscribe(...channels: string[]): Promise<unknown>;
  /** `SUNSUBSCRIBE`. */
  sunsubscribe(...channels: string[]): Promise<unknown>;
  /** `SUBSCRIBE`, on servers without sharded pub/sub. */
  subscribe(...channels: string[]): Promise<unknown>;
  /** `UNSUBSCRIBE`. */
  unsubscribe(...channels: string[]): Promise<unknown>;
  /** Closes a connection holdfast opened (never the user's own). */
  disconnect(): void;
  /** Adds an event listener (`ready`, `close`, `error`, `message`, `smessage`, ...). */
  on(event: string, listener: RedisEventListener): unknown;
  /** Adds a one-time event listener. */
  once(event: string, listener: RedisEventListener): unknown;
  /** Removes an event listener. */
  off(event: string, listener: RedisEventListener): unknown;
}

/** A standalone client (ioredis or iovalkey `Redis`), or one node of a Cluster. */
export interface RedisClientLike extends RedisCommandsLike {
  /** Its options: `keyPrefix`, and where it connects (`host`, `port`, ...). */
  readonly options: object;
  /** False or absent: a standalone client. */
  readonly isCluster?: boolean;
  /** A new connection with the same options; holdfast's pub/sub subscriber. */
  duplicate(override?: { keyPrefix?: string; autoResubscribe?: boolean }): RedisClientLike;
  /** `INFO`: what the server says of itself (eviction policy, `run_id`). */
  info(): Promise<string>;
}

/** A Cluster client (ioredis or iovalkey `Cluster`). */
export interface RedisClusterLike extends RedisCommandsLike {
  /** Its options: `keyPrefix`, and the options of its node connections. */
  readonly options: {
    /** The options each node connection is made with. */
    readonly redisOptions?: object;
  };
  /** True: a Cluster client. */
  readonly isCluster?: boolean;
  /** A new client for the same cluster; holdfast's sharded subscriber. */
  duplicate(startupNodes?: unknown[], override?: { shardedSubscribers?: boolean; keyPrefix?: string; redisOptions?: object }): RedisClusterLike;
  /** Its slot map: the `host:port` of the nodes serving each slot, the primary first. */
  readonly slots: readonly (readonly string[] | undefined)[];
  /** The node clients it knows of. */
  nodes(role: 'master'): RedisClientLike[];
  /** Starts connecting a `lazyConnect` client (holdfast does so before its first call, as a command would). */
  connect(): Promise<void>;
  /** Reloads the slot map; holdfast's subscriber follows the user's client. */
  refreshSlotsCache(callback: (error?: Error | null) => void): void;
}

/** A pipeline of the commands holdfast sends together. */
export interface RedisPipelineLike {
  /** Queues `EVALSHA`. */
  evalsha(sha: string, numkeys: number, ...args: (string | number)[]): RedisPipelineLike;
  /** Queues `EVAL`. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): RedisPipelineLike;
  /** Queues `WAIT numreplicas timeout`. */
  wait(numreplicas: number, timeout: number): RedisPipelineLike;
  /** Sends the queue: one `[error, reply]` pair per command. */
  exec(): Promise<[Error | null, unknown][] | null>;
}

/**
 * A node-redis client (`createClient()` of the `redis` package, 5 or 6), by
 * the members holdfast tells it by. holdfast sends everything through
 * `sendCommand` and subscribes on a `duplicate()` it owns.
 */
export interface NodeRedisClientLike {
  /** True from `connect()` until it is closed. */
  readonly isOpen: boolean;
  /** True while a connection is ready. */
  readonly isReady: boolean;
  /** A command as an array of arguments. */
  sendCommand(args: any, options?: any): Promise<unknown>;
  /** A new client with the same options; holdfast's pub/sub subscriber. */
  duplicate(...args: any[]): unknown;
  /** Adds an event listener (`ready`, `reconnecting`, `end`, `error`). */
  on(event: any, listener: RedisEventListener): unknown;
  /** Removes an event listener. */
  off(event: any, listener: RedisEventListener): unknown;
}

/** A node-redis Cluster (`createCluster()`), by the members holdfast tells it by. */
export interface NodeRedisClusterLike {
  /** True from `connect()` until it is closed. */
  readonly isOpen: boolean;
  /** A command routed by its first key. */
  sendCommand(firstKey: any, isReadonly: any, args: any, options?: any): Promise<unknown>;
  /** The primary serving a slot. */
  getSlotMaster(slot: number): unknown;
  /** A new Cluster client with the same options; holdfast's sharded subscriber. */
  duplicate(...args: any[]): unknown;
  /** Adds an event listener. */
  on(event: any, listener: RedisEventListener): unknown;
  /** Removes an event listener. */
  off(event: any, listener: RedisEventListener): unknown;
}

/** A node-redis Sentinel client (`createSentinel()`), by the members holdfast tells it by. */
export interface NodeRedisSentinelLike {
  /** True from `connect()` until it is closed. */
  readonly isOpen: boolean;
  /** True while connected to the primary. */
  readonly isReady: boolean;
  /** A command sent to the primary. */
  sendCommand(isReadonly: any, args: any, options?: any): Promise<unknown>;
  /** The primary it talks to now. */
  getMasterNode(): unknown;
  /** Adds an event listener. */
  on(event: any, listener: RedisEventListener): unknown;
  /** Removes an event listener. */
  off(event: any, listener: RedisEventListener): unknown;
}

/**
 * Bun's built-in client (`RedisClient` from `bun`), by the members holdfast
 * tells it by. holdfast sends everything through `send`, subscribes on a
 * `duplicate()` it owns, and never closes or reconnects the application's
 * client. Standalone servers only (Bun's client has no Cluster or Sentinel
 * support): holdfast refuses the others at its first call.
 */
export interface BunRedisClientLike {
  /** True while its connection is open. */
  readonly connected: boolean;
  /** Bytes waiting to be written (holdfast tells the client by it). */
  readonly bufferedAmount: number;
  /** A command and its arguments. */
  send(command: string, args: string[]): Promise<any>;
  /** A new connected client with the same options; holdfast's pub/sub subscriber. */
  duplicate(): Promise<any>;
  /** `SUBSCRIBE` one channel, with a listener of its messages. */
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  /** `UNSUBSCRIBE` the listener of one channel. */
  unsubscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  /** Connects holdfast's subscriber (never the application's client). */
  connect(): Promise<unknown>;
  /** Closes a connection holdfast opened (never the application's own). */
  close(): void;
  /** Called when its connection is made (holdfast sets it on its own subscriber only). */
  onconnect: ((this: any, ...args: any[]) => void) | null;
  /** Called when its connection is closed (holdfast sets it on its own subscriber only). */
  onclose: ((this: any, ...args: any[]) => void) | null;
}

/**
 * A client holdfast runs on: an ioredis (5 or 6) or iovalkey `Redis` or
 * `Cluster`, a node-redis (5 or 6) client, Cluster or Sentinel, Bun's
 * `RedisClient` (standalone), or any client with the same members. Its kind
 * is detected once, when a LockClient or Redlock first sees it.
 */
export type RedisLike = RedisClientLike | RedisClusterLike | NodeRedisClientLike | NodeRedisClusterLike | NodeRedisSentinelLike | BunRedisClientLike;
