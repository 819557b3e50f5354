import { readFileSync } from 'node:fs';
import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';
import { CliError, EXIT, cliErrorOf } from './cli-error.js';

/** How the command reaches Redis. */
export interface ConnectOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TLS). */
  readonly url: string;
  /** Connect as a Cluster client, the URL naming one node. */
  readonly cluster?: boolean;
  /** ACL user name (overrides the URL's). */
  readonly user?: string | undefined;
  /** Password (overrides the URL's). */
  readonly password?: string | undefined;
  /** Use TLS (implied by `rediss://`). */
  readonly tls?: boolean;
  /** PEM file of the certificate authority to trust. */
  readonly tlsCa?: string | undefined;
  /** PEM file of a client certificate. */
  readonly tlsCert?: string | undefined;
  /** PEM file of the client certificate's key. */
  readonly tlsKey?: string | undefined;
  /** Accept any server certificate. */
  readonly tlsInsecure?: boolean;
  /** Longest wait for the connection, in ms. */
  readonly connectTimeoutMs?: number;
}

/** A connected client: standalone or Cluster. */
export type Client = Redis | Cluster;

function parseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(EXIT.usage, `Expected \`--url\` to be a redis:// or rediss:// URL, got \`${url}\``);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new CliError(EXIT.usage, `Expected \`--url\` to be a redis:// or rediss:// URL, got \`${url}\``);
  }
  return parsed;
}

/** The contents of the PEM file an option names, or a usage error saying which option named what. */
function pemFile(option: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new CliError(EXIT.usage, `Expected \`--${option}\` to be a readable PEM file, got \`${file}\` (${reason})`);
  }
}

/** The ioredis options for one node: credentials, TLS, and no retrying (a command answers now or fails). */
function nodeOptions(options: ConnectOptions, url: URL): RedisOptions {
  const useTls = options.tls || url.protocol === 'rediss:';
  const username = options.user ?? (decodeURIComponent(url.username) || undefined);
  const password = options.password ?? (decodeURIComponent(url.password) || undefined);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined;
  return {
    ...(username !== undefined && { username }),
    ...(password !== undefined && { password }),
    ...(db !== undefined && !Number.isNaN(db) && { db }),
    ...(useTls && {
      tls: {
        ...(options.tlsCa && { ca: pemFile('tls-ca', options.tlsCa) }),
        ...(options.tlsCert && { cert: pemFile('tls-cert', options.tlsCert) }),
        ...(options.tlsKey && { key: pemFile('tls-key', options.tlsKey) }),
        ...(options.tlsInsecure && { rejectUnauthorized: false }),
      },
    }),
    connectTimeout: options.connectTimeoutMs ?? 5_000,
    // connect() pings itself; ioredis's own check (INFO) is refused to ACL users without it, with a console line.
    enableReadyCheck: false,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  };
}

/** Connects, or throws a CliError saying why not (unreachable, denied). */
export async function connect(options: ConnectOptions): Promise<Client> {
  const url = parseUrl(options.url);
  const redisOptions = nodeOptions(options, url);
  const node: ClusterNode = { host: url.hostname || '127.0.0.1', port: Number(url.port || 6379) };
  const client: Client = options.cluster
    ? new Cluster([node], { redisOptions, lazyConnect: true, clusterRetryStrategy: () => null, enableOfflineQueue: true })
    : new Redis({ ...redisOptions, host: node.host, port: node.port });
  // Connection errors are answered by connect()'s rejection; the event would only repeat them.
  let lastError: unknown;
  client.on('error', (error: unknown) => (lastError = error));
  try {
    await client.connect();
    // A Cluster connects without asking the node anything an ACL refuses: ask once.
    await client.ping();
  } catch (error) {
    client.disconnect();
    // The connection's own error says more than connect()'s ("Connection is closed").
    const failure = cliErrorOf(lastError ?? error);
    // A plain port never answers a TLS handshake: the wait only times out, which alone says little.
    if (redisOptions.tls && failure.exitCode === EXIT.unreachable && /ETIMEDOUT|ECONNRESET|Connection is closed/.test(failure.message)) {
      throw new CliError(EXIT.unreachable, `${failure.message} (no TLS handshake answered: does this port speak TLS?)`);
    }
    throw failure;
  }
  return client;
}
