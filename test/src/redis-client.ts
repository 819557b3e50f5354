import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { glideConfig, glideTwin } from './glide-twin.js';
import { clientMode, createNodeRedisClient, twin } from './node-redis-twin.js';

/** Where a client connects: a redis:// URL or host/port options. */
export type ClientTarget = string | { host: string; port: number };

// Without a listener ioredis prints "[ioredis] Unhandled error event" for every
// failed reconnect, which drowns real output in tests that kill servers.
const ignore = (): void => {};

function createClient(target: ClientTarget, options: RedisOptions): Redis {
  const merged: RedisOptions = { lazyConnect: false, ...options };
  const client =
    typeof target === 'string' ? new Redis(target, merged) : new Redis({ ...target, ...merged });
  client.on('error', ignore);
  if (clientMode === 'glide') return glideTwin(client, glideConfig(target, options), false);
  if (clientMode !== 'node-redis') return client;
  return twin(client, () => createNodeRedisClient(target, options));
}

/**
 * Remembers every client handed to a test so the server's stop() can close
 * them all; a forgotten client would otherwise reconnect forever and keep the
 * worker alive.
 */
export class ClientTracker {
  private readonly clients = new Set<Redis>();

  constructor(private readonly target: ClientTarget) {}

  create(options: RedisOptions = {}): Redis {
    const client = createClient(this.target, options);
    this.clients.add(client);
    // 'end' means ioredis gave up for good (quit/disconnect), so stop tracking.
    client.once('end', () => this.clients.delete(client));
    return client;
  }

  disconnectAll(): void {
    for (const client of this.clients) client.disconnect();
    this.clients.clear();
  }
}

/**
 * Runs one admin command on a throwaway connection that fails fast instead of
 * retrying or waiting, so e.g. flush() against a dead or paused server
 * rejects rather than hangs.
 */
export async function withAdminClient<T>(
  target: ClientTarget,
  run: (client: Redis) => Promise<T>,
): Promise<T> {
  const client = createClient(target, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableReadyCheck: false,
    connectTimeout: 2000,
    commandTimeout: 5000,
  });
  try {
    await client.connect();
    return await run(client);
  } finally {
    client.disconnect();
  }
}
