import { detectBackend } from './backend.js';
import { startRedis } from './redis-server.js';
import type { RedisServer } from './redis-server.js';
import { REDIS_IMAGE, redisFromEnv, serverVersion, startRedisContainer } from './remote-redis.js';

// Kept on globalThis so "once per worker process" holds even when the test
// runner re-evaluates this module for every test file.
const SHARED_KEY = Symbol.for('@holdfast/test-utils:shared-redis');
const registry = globalThis as typeof globalThis & { [SHARED_KEY]?: Promise<RedisServer> };

/**
 * The one server most tests share, created once per worker process (module
 * state is per worker). Tests isolate themselves with uniqueName() keys
 * rather than flushing, since files in the same worker may run back to back.
 */
export function sharedRedis(): Promise<RedisServer> {
  let shared = registry[SHARED_KEY];
  if (!shared) {
    const creating = createShared();
    shared = creating;
    registry[SHARED_KEY] = creating;
    // A failed start must not be memoised, or one flaky boot fails the run.
    creating.catch(() => {
      if (registry[SHARED_KEY] === creating) delete registry[SHARED_KEY];
    });
  }
  return shared;
}

async function createShared(): Promise<RedisServer> {
  const backend = await detectBackend();
  const server =
    backend === 'env'
      ? redisFromEnv(requireRedisUrl())
      : backend === 'container'
        ? await startRedisContainer()
        : await startRedis();
  // If a test stops the shared server, the next caller gets a fresh one
  // instead of a dead handle.
  const stop = server.stop.bind(server);
  server.stop = async () => {
    delete registry[SHARED_KEY];
    await stop();
  };
  return server;
}

function requireRedisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set');
  return url;
}

/** One line for the run log, so a failure report says which Redis was used. */
export async function describeBackend(): Promise<string> {
  const backend = await detectBackend();
  if (backend === 'env') {
    const url = new URL(requireRedisUrl());
    // Host and port only: the URL may carry a password.
    const where = `${url.hostname}:${url.port || 6379}`;
    try {
      const version = await serverVersion(requireRedisUrl());
      return `redis backend: env (redis-server ${version} at ${where} via REDIS_URL)`;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return `redis backend: env (REDIS_URL ${where} is unreachable: ${reason})`;
    }
  }
  if (backend === 'container') {
    // Booting a container just to print its version would cost seconds per
    // run; the runtime identity is what matters for debugging.
    const { getContainerRuntimeClient } = await import('testcontainers');
    const runtime = (await getContainerRuntimeClient()).info.containerRuntime;
    return `redis backend: container (${REDIS_IMAGE} on ${runtime.operatingSystem}, ${runtime.host})`;
  }
  const shared = registry[SHARED_KEY];
  const existing = shared ? await shared.catch(() => undefined) : undefined;
  const server = existing ?? (await startRedis());
  try {
    const version = await serverVersion({ host: server.host, port: server.port });
    return `redis backend: spawn (redis-server ${version} at ${server.host}:${server.port})`;
  } finally {
    if (!existing) await server.stop();
  }
}
