import { InvalidArgumentError, type RedisLike } from '@holdfast/core';
import { keyPrefixOf, withTimeout } from '@holdfast/core/internal';

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return value === null ? 'null' : typeof value;
}

/** Where a standalone ioredis client connects, when it says; undefined for Cluster or unknown. */
function endpoint(redis: RedisLike): string | undefined {
  type Options = { host?: unknown; port?: unknown; path?: unknown; db?: unknown; sentinels?: unknown; name?: unknown };
  const options = (redis as { options?: Options }).options;
  if (!options || ('isCluster' in redis && redis.isCluster === true)) return undefined;
  let where: string;
  if (Array.isArray(options.sentinels) && options.sentinels.length > 0) where = `sentinel:${String(options.name)}`;
  else if (typeof options.path === 'string' && options.path) where = options.path;
  else where = `${String(options.host)}:${String(options.port)}`;
  return `${where}/${String(options.db ?? 0)}`;
}

/**
 * One client per independent server. The same client (or two clients to the
 * same server and database) twice would count one server's vote twice.
 */
export function validateInstances(instances: unknown): RedisLike[] {
  if (!Array.isArray(instances) || instances.length === 0) {
    throw new InvalidArgumentError(
      `Expected \`instances\` to be a non-empty array of ioredis clients, got \`${describe(instances)}\``,
    );
  }
  const seen = new Map<string, number>();
  instances.forEach((redis: unknown, i) => {
    const r = redis as Partial<RedisLike> | null;
    if (typeof r !== 'object' || r === null || typeof r.evalsha !== 'function' || typeof r.duplicate !== 'function') {
      throw new InvalidArgumentError(
        `Expected \`instances[${i}]\` to be an ioredis client, got \`${describe(redis)}\``,
      );
    }
    if (instances.indexOf(redis) !== i) {
      throw new InvalidArgumentError(
        `Expected \`instances\` to be distinct clients, got the same client at ${instances.indexOf(redis)} and ${i}`,
      );
    }
    const at = endpoint(redis as RedisLike);
    if (at !== undefined) {
      const first = seen.get(at);
      if (first !== undefined) {
        throw new InvalidArgumentError(`Expected \`instances\` to be distinct servers, got ${at} at ${first} and ${i}`);
      }
      seen.set(at, i);
    }
    // One channel name serves every instance (see core's LockKeys.channel).
    if (keyPrefixOf(redis) !== keyPrefixOf(instances[0])) {
      throw new InvalidArgumentError(
        `Expected \`instances\` to share one ioredis keyPrefix, got ${JSON.stringify(keyPrefixOf(instances[0]))} at 0 and ${JSON.stringify(keyPrefixOf(redis))} at ${i}`,
      );
    }
  });
  return instances as RedisLike[];
}

/**
 * Waits until every client with `enableOfflineQueue: false` that is still
 * making its first connection is ready, or that attempt failed: such a client
 * fails a call at once while it connects ("Stream isn't writeable"), so the
 * first acquisition on fresh clients would lose the votes of healthy
 * instances. Bounded by `timeoutMs`; never waits for a client that is not
 * connecting (down and retrying, closed, or lazy).
 */
export async function firstConnections(clients: readonly RedisLike[], timeoutMs: number): Promise<void> {
  await Promise.all(
    clients.map((redis) => {
      const offlineQueue = (redis as { options?: { enableOfflineQueue?: unknown } }).options?.enableOfflineQueue;
      if (offlineQueue !== false || (redis.status !== 'connecting' && redis.status !== 'connect')) return undefined;
      let done: (() => void) | undefined;
      return withTimeout(
        new Promise<void>((resolve) => {
          done = resolve;
          redis.once('ready', resolve);
          redis.once('close', resolve);
        }),
        timeoutMs,
      )
        .catch(() => undefined)
        .finally(() => {
          redis.off('ready', done!);
          redis.off('close', done!);
        });
    }),
  );
}
