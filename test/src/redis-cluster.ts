import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, type ClusterOptions } from 'ioredis';
import { glideConfig, glideTwin } from './glide-twin.js';
import { clientMode, clientOptions, nodeRedis, socketOptions, twin } from './node-redis-twin.js';
import { startRedisServers, type RedisServer } from './redis-server.js';

const run = promisify(execFile);

/** A local Redis Cluster of real processes (primaries with one replica each). */
export interface RedisClusterFixture {
  readonly servers: readonly RedisServer[];
  /** An ioredis Cluster client, closed by stop(). */
  client(options?: ClusterOptions): Cluster;
  stop(): Promise<void>;
}

/**
 * Starts 2 × `primaries` `redis-server --cluster-enabled yes` processes on
 * loopback and forms a cluster with `redis-cli --cluster create` (one replica
 * per primary). Takes a few seconds: share one per test file.
 */
export async function startRedisCluster(primaries = 3): Promise<RedisClusterFixture> {
  const servers = await startRedisServers(primaries * 2, {
    args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
  });
  const clients: Cluster[] = [];
  const stop = async () => {
    for (const c of clients.splice(0)) c.disconnect();
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    await run('redis-cli', [
      '--cluster', 'create',
      ...servers.map((s) => `${s.host}:${s.port}`),
      '--cluster-replicas', '1',
      '--cluster-yes',
    ]);
    const admin = servers[0]!.client();
    const deadline = Date.now() + 20_000;
    for (;;) {
      const info = String(await admin.call('CLUSTER', 'INFO'));
      // Formed, and every replica known as one (failover tests need them).
      const nodes = String(await admin.call('CLUSTER', 'NODES'));
      const replicas = nodes.split('\n').filter((line) => line.split(' ')[2]?.includes('slave')).length;
      if (info.includes('cluster_state:ok') && replicas === primaries) break;
      if (Date.now() > deadline) throw new Error(`cluster did not form:\n${info}\n${nodes}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    admin.disconnect();
    // Replicas in sync, so that a CLUSTER FAILOVER can complete at once.
    for (const server of servers) {
      const node = server.client();
      try {
        for (;;) {
          const info = await node.info('replication');
          if (info.includes('role:master') || info.includes('master_link_status:up')) break;
          if (Date.now() > deadline) throw new Error(`replica did not sync:\n${info}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        node.disconnect();
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    servers,
    client(options?: ClusterOptions) {
      const client = clusterClient(servers, options);
      clients.push(client);
      return client;
    },
    stop,
  };
}

/**
 * A Cluster client with `nodes` as its startup nodes, which need not be a
 * fixture's (ports nothing listens on, say): an ioredis Cluster, or in the
 * node-redis pass its twin (holdfast runs on a node-redis `createCluster()`
 * with the same root nodes). The caller closes it (`disconnect()`).
 */
export function clusterClient(nodes: readonly { host: string; port: number }[], options?: ClusterOptions): Cluster {
  const c = new Cluster(
    nodes.map((s) => ({ host: s.host, port: s.port })),
    { ...options },
  );
  c.on('error', () => undefined);
  if (clientMode === 'glide') {
    const io = options?.redisOptions ?? {};
    return glideTwin(c, glideConfig(nodes, { ...io, ...(options?.lazyConnect ? { lazyConnect: true } : {}) }), true);
  }
  if (clientMode !== 'node-redis') return c;
  return twin(c, () =>
    nodeRedis().createCluster({
      rootNodes: nodes.map((s) => ({ socket: { host: s.host, port: s.port } })),
      defaults: { socket: socketOptions(options?.redisOptions ?? {}), ...clientOptions(options?.redisOptions ?? {}) },
    }),
  );
}
