import type { GlideClient } from '@valkey/valkey-glide';
import type { RedisOptions } from 'ioredis';

/** One address of the server or Cluster node a GLIDE client connects to. */
export interface GlideAddress {
  readonly host: string;
  readonly port: number;
}

/** GLIDE's configuration of a client, as the harness makes it. */
export type GlideConfig = Record<string, unknown> & { addresses: GlideAddress[]; requestTimeout?: number };

/** GLIDE's package, loaded on first use. */
export declare function glidePackage(): typeof import('@valkey/valkey-glide');

/** GLIDE's configuration for what a test asked of ioredis (see glide-client.mjs). */
export declare function glideConfig(target: string | GlideAddress | readonly GlideAddress[], options?: RedisOptions): GlideConfig;

/** A connected standalone GLIDE client to `url` with `options` (ioredis options) translated. */
export declare function createGlideClient(url: string, options?: RedisOptions): Promise<GlideClient>;
