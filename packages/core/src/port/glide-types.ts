/**
 * The members of a Valkey GLIDE client (`@valkey/valkey-glide` 2.x,
 * `GlideClient` and `GlideClusterClient`) that holdfast uses, typed
 * structurally: no GLIDE module is imported for them. `config`,
 * `requestTimeout` and `isClosed` are fields GLIDE declares private; they are
 * read, never written.
 */

/** A route of GLIDE's Cluster client (`RouteOption['route']`). */
export type GlideRoute =
  | 'randomNode'
  | 'allPrimaries'
  | { readonly type: 'primarySlotKey'; readonly key: string }
  | { readonly type: 'routeByAddress'; readonly host: string; readonly port: number };

/** A message of GLIDE's pub/sub callback (`PubSubMsg`). */
export interface GlidePubSubMessage {
  readonly channel: unknown;
  readonly message: unknown;
}

/** What a GLIDE client is made from (`GlideClientConfiguration`, `GlideClusterClientConfiguration`), as holdfast reads it. */
export interface GlideConfig {
  readonly addresses?: readonly { readonly host?: string; readonly port?: number }[];
  readonly databaseId?: number;
  readonly requestTimeout?: number;
  readonly [option: string]: unknown;
}

/** A GLIDE client or Cluster client. */
export interface GlideClientLike {
  customCommand(args: string[], options?: { route?: GlideRoute; decoder?: number }): Promise<unknown>;
  exec(batch: object, raiseOnError: boolean, options?: { timeout?: number; route?: GlideRoute; decoder?: number }): Promise<unknown[] | null>;
  subscribe(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  unsubscribe(channels: Iterable<string> | null, timeoutMs: number): Promise<void>;
  unsubscribeLazy?(channels: Iterable<string> | null): Promise<void>;
  ssubscribe?(channels: Iterable<string>, timeoutMs: number): Promise<void>;
  sunsubscribe?(channels: Iterable<string> | null, timeoutMs: number): Promise<void>;
  sunsubscribeLazy?(channels: Iterable<string> | null): Promise<void>;
  close(message?: string): void;
  /** Private in GLIDE: the configuration the client was made with. */
  readonly config?: GlideConfig;
  /** Private in GLIDE: its request timeout in ms (250 by default). */
  readonly requestTimeout?: number;
  /** Protected in GLIDE: true once `close()` was called. */
  readonly isClosed?: boolean;
}

/** The class of a GLIDE client: `createClient` makes another of the same kind. */
export interface GlideClientClass {
  createClient(config: GlideConfig): Promise<GlideClientLike>;
}

/** The GLIDE package's batch classes (`Batch`, `ClusterBatch`), loaded when a first pipeline is sent. */
export interface GlideBatch {
  customCommand(args: string[]): unknown;
}
export type GlideBatchClass = new (isAtomic: boolean) => GlideBatch;
