import { fencedWrite } from '@holdfast/core';
import { Redlock } from '@holdfast/redlock';
import { startRedis, startRedisServers, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { type HistoryRecorder } from '@holdfast/test-utils/models';

export const NAME = 'redlock';
const RESOURCE = 'fenced:redlock';

export interface Cluster {
  nodes: RedisServer[];
  resourceServer: RedisServer;
  resource: Redis;
  /** A Redlock with clients of its own that fail at once on a dead node (no replay on restart). */
  redlock(prefix: string): Redlock;
  stop(): Promise<void>;
}

export async function cluster(persistent: boolean): Promise<Cluster> {
  const nodes = await startRedisServers(3, { persistent });
  const resourceServer = await startRedis();
  const made: Redlock[] = [];
  return {
    nodes,
    resourceServer,
    resource: resourceServer.client(),
    redlock(prefix) {
      const clients = nodes.map((n) => n.client({ enableOfflineQueue: false, maxRetriesPerRequest: 0 }));
      const redlock = new Redlock(clients, { prefix, instanceTimeoutMs: 250, retryDelayMs: 50 });
      redlock.on('error', () => {});
      made.push(redlock);
      return redlock;
    },
    async stop() {
      await Promise.all(made.map((r) => r.close()));
      await Promise.all([...nodes, resourceServer].map((s) => s.stop()));
    },
  };
}

/** Records a holder's fenced write under the lock. */
export async function write(history: HistoryRecorder, holder: string, resource: Redis, token: number): Promise<boolean> {
  history.record(holder, NAME, 'write-invoke', { resource: RESOURCE, token });
  const accepted = await fencedWrite(resource, RESOURCE, token, holder);
  history.record(holder, NAME, 'write-ok', { resource: RESOURCE, accepted });
  return accepted;
}

