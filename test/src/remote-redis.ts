import type { Redis, RedisOptions } from 'ioredis';
import type { RedisServer } from './redis-server.js';
import { ClientTracker, withAdminClient } from './redis-client.js';
import type { ClientTarget } from './redis-client.js';

export const REDIS_IMAGE = 'redis:7';

interface RemoteRedisConfig {
  backend: 'env' | 'container';
  host: string;
  port: number;
  url: string;
  /** What clients connect with; for REDIS_URL the URL itself keeps auth/db/TLS. */
  target: ClientTarget;
  onStop?: () => Promise<void>;
}

/**
 * A Redis we do not own as a process (REDIS_URL or a container), so the
 * process-level fault operations cannot be offered. Tests that need them
 * should call startRedis() instead of sharedRedis().
 */
class RemoteRedis implements RedisServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly backend: 'env' | 'container';
  readonly pid = undefined;
  private readonly clients: ClientTracker;
  private stopped = false;

  constructor(private readonly config: RemoteRedisConfig) {
    this.host = config.host;
    this.port = config.port;
    this.url = config.url;
    this.backend = config.backend;
    this.clients = new ClientTracker(config.target);
  }

  client(options?: RedisOptions): Redis {
    return this.clients.create(options);
  }

  kill(): Promise<void> {
    return Promise.reject(this.unsupported('kill'));
  }

  pause(): void {
    throw this.unsupported('pause');
  }

  resume(): void {
    throw this.unsupported('resume');
  }

  restart(): Promise<void> {
    return Promise.reject(this.unsupported('restart'));
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.clients.disconnectAll();
    await this.config.onStop?.();
  }

  async flush(): Promise<void> {
    // On REDIS_URL only the selected database is wiped: that server may be
    // shared with other things the developer cares about.
    await withAdminClient(this.config.target, (redis) =>
      this.backend === 'env' ? redis.flushdb() : redis.flushall(),
    );
  }

  private unsupported(operation: string): Error {
    const label = this.backend === 'env' ? 'REDIS_URL' : 'container';
    return new Error(
      `${operation}() is not supported on ${label} backend; use startRedis() for process-level faults`,
    );
  }
}

export function redisFromEnv(url: string): RedisServer {
  const parsed = new URL(url);
  return new RemoteRedis({
    backend: 'env',
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    url,
    target: url,
  });
}

export async function startRedisContainer(): Promise<RedisServer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(REDIS_IMAGE)
    .withExposedPorts(6379)
    // Same settings as the spawn backend so tests behave identically; the
    // debug command is open to all since the container is private anyway.
    .withCommand(['redis-server', '--save', '', '--appendonly', 'no', '--enable-debug-command', 'yes'])
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  const host = container.getHost();
  const port = container.getMappedPort(6379);
  return new RemoteRedis({
    backend: 'container',
    host,
    port,
    url: `redis://${host}:${port}`,
    target: { host, port },
    onStop: async () => {
      await container.stop();
    },
  });
}

/** redis_version from INFO server, on a throwaway connection. */
export async function serverVersion(target: ClientTarget): Promise<string> {
  const info = await withAdminClient(target, (redis) => redis.info('server'));
  return /^redis_version:(\S+)/m.exec(info)?.[1] ?? 'unknown';
}
