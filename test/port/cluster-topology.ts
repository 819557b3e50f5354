import type { RedisClusterFixture } from '@holdfast/test-utils';
import { waitForRole } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';

/** One node of the cluster as CLUSTER NODES lists it. */
export interface ClusterNode {
  readonly id: string;
  /** `host:port`, as ports and CLUSTER SLOTS name nodes. */
  readonly address: string;
  readonly primary: boolean;
  /** The primary's id, for a replica. */
  readonly primaryId: string | undefined;
  readonly ranges: readonly [number, number][];
}

export async function clusterNodes(admin: Redis): Promise<ClusterNode[]> {
  const lines = String(await admin.call('CLUSTER', 'NODES')).trim().split('\n');
  return lines.map((line) => {
    const f = line.split(' ');
    const ranges = f.slice(8).filter((r) => /^\d/.test(r)).map((r): [number, number] => {
      const [from, to] = r.split('-').map(Number);
      return [from!, to ?? from!];
    });
    return { id: f[0]!, address: f[1]!.split('@')[0]!, primary: f[2]!.includes('master'), primaryId: f[3] === '-' ? undefined : f[3], ranges };
  });
}

/** The primary serving `slot`. */
export async function ownerOf(admin: Redis, slot: number): Promise<ClusterNode> {
  const owner = (await clusterNodes(admin)).find((n) => n.primary && n.ranges.some(([a, b]) => slot >= a && slot <= b));
  if (!owner) throw new Error(`no primary serves slot ${slot}`);
  return owner;
}

/** Admin connections per node address (ioredis, for the test's own commands), closed with the fixture. */
export function admins(cluster: RedisClusterFixture): (address: string) => Redis {
  const opened = new Map<string, Redis>();
  return (address) => {
    let admin = opened.get(address);
    if (!admin) {
      const server = cluster.servers.find((s) => `${s.host}:${s.port}` === address);
      if (!server) throw new Error(`no server at ${address}`);
      opened.set(address, (admin = server.client()));
    }
    return admin;
  };
}

/** Moves `slot` and its keys to another primary, live, as `redis-cli --cluster reshard` does. */
export async function migrateSlot(admin: (address: string) => Redis, any: Redis, slot: number): Promise<{ from: ClusterNode; to: ClusterNode }> {
  const nodes = await clusterNodes(any);
  const from = await ownerOf(any, slot);
  const to = nodes.find((n) => n.primary && n.id !== from.id)!;
  await admin(to.address).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id);
  await admin(from.address).call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id);
  const [host, port] = to.address.split(':');
  for (;;) {
    const keys = (await admin(from.address).call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
    if (keys.length === 0) break;
    await admin(from.address).call('MIGRATE', host!, port!, '', 0, 5_000, 'KEYS', ...keys);
  }
  for (const node of nodes.filter((n) => n.primary)) await admin(node.address).call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id);
  return { from, to };
}

/** `CLUSTER FAILOVER` of the primary serving `slot`, done when its replica is a primary. */
export async function failOver(admin: (address: string) => Redis, any: Redis, slot: number): Promise<{ from: ClusterNode; to: ClusterNode }> {
  const from = await ownerOf(any, slot);
  const to = (await clusterNodes(any)).find((n) => n.primaryId === from.id)!;
  await admin(to.address).call('CLUSTER', 'FAILOVER');
  await waitForRole(admin(to.address), 'master');
  return { from, to };
}
