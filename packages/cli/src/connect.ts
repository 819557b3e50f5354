import { readFileSync } from 'node:fs';
import { Cluster, Redis, type ClusterNode, type RedisOptions } from 'ioredis';
import { ACCESS_DENIED, CliError, EXIT, cliErrorOf, isReplyError } from './cli-error.js';

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

/** What a connection asks of the server once connected: credentials and a database. */
interface Handshake {
  /** `AUTH` arguments: the password, after the user name when one is given. */
  readonly auth?: string[];
  /** The database number of the URL's path. */
  readonly db?: number;
}

/** The database a URL's path names (`/3`), or a usage error. */
function databaseOf(url: URL): number | undefined {
  const path = url.pathname.slice(1);
  if (path === '') return undefined;
  if (!/^\d+$/.test(path)) throw new CliError(EXIT.usage, `Expected the database in \`--url\` to be a number, got \`${decodeURIComponent(path)}\``);
  return Number(path);
}

function handshakeOf(options: ConnectOptions, url: URL): Handshake {
  const username = options.user ?? (decodeURIComponent(url.username) || undefined);
  const password = options.password ?? (decodeURIComponent(url.password) || undefined);
  // `AUTH <one argument>` takes it for a password: a user alone would be sent as one.
  if (username !== undefined && password === undefined) {
    throw new CliError(EXIT.usage, 'A user name needs a password: `--password`, $REDIS_PASSWORD or the URL\'s');
  }
  const db = databaseOf(url);
  return {
    ...(password !== undefined && { auth: username === undefined ? [password] : [username, password] }),
    ...(db !== undefined && { db }),
  };
}

/** TLS options given to a connection without TLS would be ignored: refused instead. */
function checkTlsOptions(options: ConnectOptions, useTls: boolean): void {
  if (useTls) return;
  const given = [
    ['tls-ca', options.tlsCa],
    ['tls-cert', options.tlsCert],
    ['tls-key', options.tlsKey],
    ['tls-insecure', options.tlsInsecure || undefined],
  ].find(([, value]) => value !== undefined);
  if (given) throw new CliError(EXIT.usage, `\`--${given[0]}\` applies to TLS only: add \`--tls\` or use a rediss:// URL`);
}

/** The ioredis options for one node: TLS, and no retrying (a command answers now or fails). No credentials, no database. */
function nodeOptions(options: ConnectOptions, useTls: boolean): RedisOptions {
  return {
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

/**
 * Connects `client`, then runs `steps` and a PING on it; or throws a CliError saying why not.
 * A connection error is reported by the connection's own error, which says more than
 * connect()'s ("Connection is closed").
 */
async function open(client: Client, steps: (client: Client) => Promise<void>, tls: boolean): Promise<void> {
  let lastError: unknown;
  // Connection errors are answered by connect()'s rejection; the event would only repeat them.
  client.on('error', (error: unknown) => (lastError = error));
  try {
    await client.connect();
    await steps(client);
    // A Cluster connects without asking the node anything an ACL refuses: ask once.
    await client.ping();
  } catch (error) {
    client.disconnect();
    const failure = cliErrorOf(error instanceof CliError || isReplyError(error) ? error : (lastError ?? error));
    // A plain port never answers a TLS handshake: the wait only times out, which alone says little.
    if (tls && failure.exitCode === EXIT.unreachable && /ETIMEDOUT|ECONNRESET|Connection is closed/.test(failure.message)) {
      throw new CliError(EXIT.unreachable, `${failure.message} (no TLS handshake answered: does this port speak TLS?)`);
    }
    throw failure;
  }
}

/** Sends one handshake command; a refusal other than for credentials says which command the server refused. */
async function handshakeCommand(client: Client, command: string, args: (string | number)[], shown: string): Promise<void> {
  try {
    await client.call(command, ...args);
  } catch (error) {
    if (!isReplyError(error) || ACCESS_DENIED.test((error as Error).message)) throw error;
    throw new CliError(EXIT.failed, `Redis refused ${shown}: ${(error as Error).message}`);
  }
}

/**
 * Connects, or throws a CliError saying why not (unreachable, denied, a connection option the
 * server refused). The credentials and the database are first tried on a connection of the
 * command's own, which sends AUTH and SELECT itself: ioredis, given them, only warns when the
 * server needs no password and goes on in database 0 when SELECT fails. The client then gets
 * them as options, so every connection it opens (a Cluster's nodes, `watch`'s subscriber) has them.
 */
export async function connect(options: ConnectOptions): Promise<Client> {
  const url = parseUrl(options.url);
  const useTls = options.tls === true || url.protocol === 'rediss:';
  checkTlsOptions(options, useTls);
  const handshake = handshakeOf(options, url);
  const redisOptions = nodeOptions(options, useTls);
  const node: ClusterNode = { host: url.hostname || '127.0.0.1', port: Number(url.port || 6379) };
  if (handshake.auth || handshake.db !== undefined) {
    const probe = new Redis({ ...redisOptions, host: node.host, port: node.port });
    await open(
      probe,
      async (client) => {
        if (handshake.auth) await handshakeCommand(client, 'AUTH', handshake.auth, 'AUTH');
        if (handshake.db !== undefined) await handshakeCommand(client, 'SELECT', [handshake.db], `SELECT ${handshake.db} (the database of \`--url\`)`);
      },
      useTls,
    );
    probe.disconnect();
  }
  const [username, password] = handshake.auth?.length === 2 ? handshake.auth : [undefined, handshake.auth?.[0]];
  const withHandshake: RedisOptions = {
    ...redisOptions,
    ...(username !== undefined && { username }),
    ...(password !== undefined && { password }),
  };
  // A Cluster has database 0 only, which the probe's SELECT confirmed.
  const client: Client = options.cluster
    ? new Cluster([node], { redisOptions: withHandshake, lazyConnect: true, clusterRetryStrategy: () => null, enableOfflineQueue: true })
    : new Redis({ ...withHandshake, ...(handshake.db !== undefined && { db: handshake.db }), host: node.host, port: node.port });
  await open(client, async () => undefined, useTls);
  return client;
}
