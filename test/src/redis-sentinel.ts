import { Redis, type RedisOptions } from 'ioredis';
import type { RedisReplicaPair } from './redis-replication.js';
import { clientMode, nodeRedis, twin } from './node-redis-twin.js';
import { startRedis, type RedisServer } from './redis-server.js';

/** The name the sentinel monitors the pair under. */
export const SENTINEL_MASTER_NAME = 'holdfast';

/** One Sentinel watching a primary + replica pair (quorum 1, fast failure detection). */
export interface RedisSentinel {
  readonly server: RedisServer;
  /** An ioredis client that finds the current primary through this Sentinel; closed by stop(). */
  client(options?: RedisOptions): Redis;
  /** The address the Sentinel currently gives for the primary, `host:port`. */
  primaryAddress(): Promise<string>;
  stop(): Promise<void>;
}

export async function startRedisSentinel(pair: RedisReplicaPair): Promise<RedisSentinel> {
  const server = await startRedis({
    configLines: [
      `sentinel monitor ${SENTINEL_MASTER_NAME} ${pair.primary.host} ${pair.primary.port} 1`,
      `sentinel down-after-milliseconds ${SENTINEL_MASTER_NAME} 1000`,
      `sentinel failover-timeout ${SENTINEL_MASTER_NAME} 10000`,
    ],
    args: ['--sentinel'],
  });
  const clients = new Set<Redis>();
  const admin = server.client();
  const sentinel: RedisSentinel = {
    server,
    client(options?: RedisOptions) {
      const client = new Redis({
        sentinels: [{ host: server.host, port: server.port }],
        name: SENTINEL_MASTER_NAME,
        ...options,
      });
      client.on('error', () => undefined);
      const user =
        clientMode === 'node-redis'
          ? twin(client, () =>
              nodeRedis().createSentinel({ name: SENTINEL_MASTER_NAME, sentinelRootNodes: [{ host: server.host, port: server.port }] }),
            )
          : client;
      clients.add(user);
      return user;
    },
    async primaryAddress() {
      const [host, port] = (await admin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER_NAME)) as string[];
      return `${host}:${port}`;
    },
    async stop() {
      for (const client of clients) client.disconnect();
      clients.clear();
      await server.stop();
    },
  };
  // Ready once it has found the replica (from the primary's INFO), so a failover has a target.
  const deadline = Date.now() + 20_000;
  for (;;) {
    // Each replica is a flat [field, value, …] list; a promotable one is
    // connected, not down, and has a link to its primary.
    const replicas = (await admin.call('SENTINEL', 'REPLICAS', SENTINEL_MASTER_NAME)) as string[][];
    const ready = replicas.some((fields) => {
      const info = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i]!, fields[i + 1]!);
      return info.get('flags') === 'slave' && info.get('master-link-status') === 'ok';
    });
    if (ready) break;
    if (Date.now() > deadline) {
      await sentinel.stop();
      throw new Error('sentinel did not discover the replica');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return sentinel;
}
