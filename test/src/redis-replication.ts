import type { Redis } from 'ioredis';
import { FaultProxy } from './fault-proxy.js';
import { startRedis, type RedisServer } from './redis-server.js';

/** A primary with one replica, both real processes on loopback. */
export interface RedisReplicaPair {
  readonly primary: RedisServer;
  readonly replica: RedisServer;
  /**
   * The replication link runs through this proxy: `link.blackhole(true)`
   * makes the replica miss every write from then on, with no error on either
   * side (a paused replica would still read them from its socket buffer later).
   */
  readonly link: FaultProxy;
  /** Makes the replica a primary of its own (`REPLICAOF NO ONE`), as a failover does. */
  promoteReplica(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a primary and a replica of it, and waits until the replica is in
 * sync, so that writes from then on reach it unless it is paused.
 */
export async function startRedisReplicaPair(): Promise<RedisReplicaPair> {
  // No 5 s wait before the initial sync (the diskless default).
  const primary = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] });
  let replica: RedisServer | undefined;
  let link: FaultProxy | undefined;
  try {
    link = await FaultProxy.start(primary);
    replica = await startRedis({ args: ['--replicaof', link.host, String(link.port)] });
    const admin = replica.client();
    const deadline = Date.now() + 10_000;
    try {
      for (;;) {
        const info = await admin.info('replication');
        if (info.includes('master_link_status:up')) break;
        if (Date.now() > deadline) throw new Error(`replica did not sync:\n${info}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      admin.disconnect();
    }
  } catch (error) {
    await replica?.stop();
    await link?.close();
    await primary.stop();
    throw error;
  }
  const replicaServer = replica;
  const replicationLink = link;
  return {
    primary,
    replica: replicaServer,
    link: replicationLink,
    async promoteReplica() {
      const admin = replicaServer.client();
      try {
        await admin.call('REPLICAOF', 'NO', 'ONE');
      } finally {
        admin.disconnect();
      }
    },
    async stop() {
      await Promise.all([primary.stop(), replicaServer.stop(), replicationLink.close()]);
    },
  };
}

/** Waits until the server behind `redis` reports `role` (after a failover, say). */
export async function waitForRole(redis: Redis, role: 'master' | 'slave', timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await redis.info('replication')).includes(`role:${role}`)) {
    if (Date.now() > deadline) throw new Error(`server did not become ${role} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
