/**
 * The one interface between holdfast and "a Redis client". Everything in
 * the packages reaches Redis through a `RedisPort`; only the adapters
 * (ioredis*.ts, node-redis*.ts, glide*.ts, bun*.ts: the port, its subscriber, its errors) know
 * which client library they talk to, and index.ts picks the adapter once per
 * client the user passed in.
 *
 * The vocabulary is the smallest holdfast needs: scripts by SHA with their
 * source for the EVAL fallback, pipelines of scripts and `WAIT`, the few
 * plain commands (`HMGET`, `SET EX`, `INFO`), cluster routing, connection
 * events, a subscriber connection holdfast owns, and what the client's
 * errors mean (see ErrorClassifier).
 *
 * @internal
 * @packageDocumentation
 */

/** Which library a port talks to. */
export type ClientKind = 'ioredis' | 'node-redis' | 'glide' | 'bun';

/**
 * A client's connection state, in ioredis's words (the adapters translate):
 * `wait` (lazy, not connecting yet), `connecting`/`connect` (first attempt
 * under way), `ready`, `close`/`reconnecting` (between attempts), `end`
 * (closed for good), `disconnecting`.
 */
export type PortStatus = 'wait' | 'connecting' | 'connect' | 'ready' | 'close' | 'reconnecting' | 'end' | 'disconnecting';

/**
 * Connection events a port reports: `ready` (a connection is usable),
 * `close` (a connection was lost: commands under way may be lost or resent),
 * `end` (closed for good), `refresh` (a Cluster's slot map changed).
 */
export type PortEvent = 'ready' | 'close' | 'end' | 'refresh';

/** One command of a pipeline. */
export type PortCommand =
  | { readonly kind: 'evalsha'; readonly sha: string; readonly keys: readonly string[]; readonly args: readonly (string | number)[] }
  | { readonly kind: 'eval'; readonly source: string; readonly keys: readonly string[]; readonly args: readonly (string | number)[] }
  | { readonly kind: 'wait'; readonly replicas: number; readonly timeoutMs: number };

/** A command as the array of strings a client that takes raw commands sends (node-redis, GLIDE). */
export function commandArgs(command: PortCommand): string[] {
  if (command.kind === 'wait') return ['WAIT', String(command.replicas), String(command.timeoutMs)];
  const head = command.kind === 'eval' ? ['EVAL', command.source] : ['EVALSHA', command.sha];
  return [...head, String(command.keys.length), ...command.keys, ...command.args.map(String)];
}

/** The outcome of each command of a pipeline, in order. */
export type PipelineReplies = [Error | null, unknown][];

/** One server behind a client (a Cluster primary, or the standalone server). */
export interface PortNode {
  /** `host:port` when known (for messages). */
  readonly address: string | undefined;
  /** `INFO` with the default sections. */
  info(): Promise<string>;
}

/** What holdfast's subscriber connection reports. */
export interface SubscriberHandlers {
  /** A message on a subscribed channel. */
  readonly onMessage: (channel: string, message: string) => void;
  /** The subscriber connected again after a loss: releases may have gone unheard. */
  readonly onReconnected: () => void;
  /** A failure of the subscriber connection. */
  readonly onError: (error: unknown) => void;
}

/** Holdfast's own pub/sub connection (a duplicate of the user's client, or the client's own pub/sub connection). */
export interface SubscriberPort {
  /** True when a message published now would reach this subscriber. */
  readonly listening: boolean;
  /** Resolves once subscriptions can be sent; rejects with RedisTimeoutError after `timeoutMs`. */
  whenReady(timeoutMs: number): Promise<void>;
  /** SSUBSCRIBE (`sharded`) or SUBSCRIBE one channel. */
  subscribe(channel: string, sharded: boolean): Promise<void>;
  /** SUNSUBSCRIBE or UNSUBSCRIBE one channel. */
  unsubscribe(channel: string, sharded: boolean): Promise<void>;
  /** Closes what holdfast opened; never the user's connection. */
  close(): void;
}

/**
 * What a client's errors mean, as each adapter knows them (errors.ts for
 * ioredis and node-redis, glide-errors.ts, bun-errors.ts); errors.ts asks every adapter's.
 */
export interface ErrorClassifier {
  /** True for an error the server replied: the request reached Redis and was refused. */
  isReply(error: Error): boolean;
  /** True for a failure of the connection: the command may not have run, and another attempt may succeed. */
  isConnectionFailure(error: Error): boolean;
}

/** A user's Redis client, as holdfast uses it. */
export interface RedisPort {
  /** The library behind it. */
  readonly kind: ClientKind;
  /** The user's client object (identity: one port per client). */
  readonly client: object;
  /** True for a Cluster client. */
  readonly isCluster: boolean;
  /** The client's own key prefix (ioredis `keyPrefix`), '' without one. */
  readonly keyPrefix: string;
  /** Where a standalone client connects (`host:port/db`), undefined when unknown or a Cluster. */
  readonly endpoint: string | undefined;
  /** False when the client fails commands at once while it is not connected (ioredis `enableOfflineQueue: false`). */
  readonly offlineQueue: boolean;
  /** The connection state now. */
  status(): PortStatus;
  /** Starts connecting a lazy client (as a command would); failures are reported by the calls. */
  connect(): void;
  /** `EVALSHA`; rejects with the server's `NOSCRIPT` error when the script is not cached. */
  evalsha(sha: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /** `EVAL`. */
  eval(source: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /**
   * The commands in one round trip on one connection, in order: on a Cluster,
   * on the node serving `routingKey` (a key of the scripts). Rejects only
   * when nothing could be sent; per-command errors come back in the replies.
   */
  pipeline(commands: readonly PortCommand[], routingKey: string | undefined): Promise<PipelineReplies>;
  /** `HMGET key ...fields`. */
  hmget(key: string, fields: readonly string[]): Promise<(string | null)[]>;
  /** `SET key value EX seconds`. */
  setEx(key: string, value: string, seconds: number): Promise<unknown>;
  /** DEL of one key (the client's own registration, at close). */
  del(key: string): Promise<unknown>;
  /** Cluster: an id of the primary serving `slot` (undefined when unknown); standalone: undefined. */
  nodeOfSlot(slot: number): string | undefined;
  /** The primaries of a Cluster (empty while none is known), or the standalone server. */
  primaries(): PortNode[];
  /** Adds a connection event listener. */
  on(event: PortEvent, listener: () => void): void;
  /** Removes a connection event listener. */
  off(event: PortEvent, listener: () => void): void;
  /** A new subscriber connection holdfast owns; it starts connecting at once. */
  subscriber(handlers: SubscriberHandlers): SubscriberPort;
}
