import type { RedisServer } from '@holdfast/test-utils';
import { jitter, storm, type Nemesis } from './storm.js';

/**
 * Faults injected through Redis commands, each on a short-lived admin
 * connection that fails fast, so a storm never stalls on its own client.
 */
async function admin<T>(server: RedisServer, run: (redis: ReturnType<RedisServer['client']>) => Promise<T>): Promise<T> {
  const redis = server.client({ maxRetriesPerRequest: 0, retryStrategy: () => null, commandTimeout: 2_000 });
  try {
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

/** `CLIENT KILL` of every normal and pub/sub connection (the storm's own is skipped). */
export function clientKillStorm(server: RedisServer, min = 50, max = 250): Nemesis {
  return storm('CLIENT KILL', jitter(min, max), () =>
    admin(server, async (redis) => {
      await redis.client('KILL', 'TYPE', 'NORMAL');
      await redis.client('KILL', 'TYPE', 'PUBSUB');
    }),
  );
}

/** `SCRIPT FLUSH`: every cached script is gone, EVALSHA answers NOSCRIPT. */
export function scriptFlushStorm(server: RedisServer, min = 10, max = 50): Nemesis {
  return storm('SCRIPT FLUSH', jitter(min, max), () => admin(server, (redis) => redis.script('FLUSH')));
}

/** `DEL` of every lock hash under `prefix` (`<prefix>:{tag}:l:<name>`), as an operator's cleanup would. */
export function deleteLocksStorm(server: RedisServer, prefix: string, min = 100, max = 300): Nemesis {
  return storm('DEL held locks', jitter(min, max), () =>
    admin(server, async (redis) => {
      const keys = (await redis.keys(`${prefix}:*`)).filter((key) => key.includes('}:l:'));
      if (keys.length > 0) await redis.del(...keys);
    }),
  );
}

/** `FLUSHALL`: locks and fence counters gone at once. */
export function flushAllStorm(server: RedisServer, min = 300, max = 600): Nemesis {
  return storm('FLUSHALL', jitter(min, max), () => admin(server, (redis) => redis.flushall()));
}
