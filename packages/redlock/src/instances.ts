import { InvalidArgumentError } from '@holdfast/core';
import { requirePort, withTimeout, type RedisPort } from '@holdfast/core/internal';

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return value === null ? 'null' : typeof value;
}

/**
 * One client per independent server. The same client (or two clients to the
 * same server and database) twice would count one server's vote twice.
 * Each client's kind (ioredis or node-redis) is detected here, once.
 */
export function validateInstances(instances: unknown): RedisPort[] {
  if (!Array.isArray(instances) || instances.length === 0) {
    throw new InvalidArgumentError(
      `Expected \`instances\` to be a non-empty array of ioredis or node-redis clients, got \`${describe(instances)}\``,
    );
  }
  const seen = new Map<string, number>();
  const ports = instances.map((redis: unknown, i) => {
    const port = requirePort(`instances[${i}]`, redis);
    if (instances.indexOf(redis) !== i) {
      throw new InvalidArgumentError(
        `Expected \`instances\` to be distinct clients, got the same client at ${instances.indexOf(redis)} and ${i}`,
      );
    }
    const at = port.endpoint;
    if (at !== undefined) {
      const first = seen.get(at);
      if (first !== undefined) {
        throw new InvalidArgumentError(`Expected \`instances\` to be distinct servers, got ${at} at ${first} and ${i}`);
      }
      seen.set(at, i);
    }
    return port;
  });
  // One channel name serves every instance (see core's LockKeys.channel).
  ports.forEach((port, i) => {
    if (port.keyPrefix !== ports[0]!.keyPrefix) {
      throw new InvalidArgumentError(
        `Expected \`instances\` to share one ioredis keyPrefix, got ${JSON.stringify(ports[0]!.keyPrefix)} at 0 and ${JSON.stringify(port.keyPrefix)} at ${i}`,
      );
    }
  });
  return ports;
}

/**
 * Waits until every client without an offline queue (ioredis
 * `enableOfflineQueue: false`) that is still making its first connection is
 * ready, or that attempt failed: such a client fails a call at once while it
 * connects ("Stream isn't writeable"), so the first acquisition on fresh
 * clients would lose the votes of healthy instances. Bounded by `timeoutMs`;
 * never waits for a client that is not connecting (down and retrying, closed, or lazy).
 */
export async function firstConnections(clients: readonly RedisPort[], timeoutMs: number): Promise<void> {
  await Promise.all(
    clients.map((redis) => {
      const status = redis.status();
      if (redis.offlineQueue || (status !== 'connecting' && status !== 'connect')) return undefined;
      let done: (() => void) | undefined;
      return withTimeout(
        new Promise<void>((resolve) => {
          done = resolve;
          redis.on('ready', resolve);
          redis.on('close', resolve);
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
