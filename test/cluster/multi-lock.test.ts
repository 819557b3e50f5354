import { LockClient, lockKeys } from '@holdfast/core/workspace';
import { Watchdog } from '@holdfast/watchdog';
import { waitFor } from '@holdfast/test-utils';
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useRedisCluster } from './cluster-suite.js';

/** Names in `count` different hash slots, plus two sharing the first one's slot. */
function spreadNames(base: string, count: number): string[] {
  const slots = new Map<number, string[]>();
  for (let i = 0; slots.size < count || (slots.get(lockKeys('p', `${base}-0`).slot)?.length ?? 0) < 2; i++) {
    const name = `${base}-${i}`;
    const slot = lockKeys('p', name).slot;
    if (!slots.has(slot) && slots.size >= count) continue;
    const group = slots.get(slot) ?? [];
    if (group.length < 2) group.push(name);
    slots.set(slot, group);
  }
  return [...slots.values()].flatMap((group, i) => (i === 0 ? group : group.slice(0, 1)));
}

/** Multi-locks on a real 3-primary Redis Cluster: names spread over every node. */
describe('multi-lock on Redis Cluster', () => {
  const cluster = useRedisCluster();

  const client = async () => {
    const redis = cluster.client();
    await waitFor(() => redis.status === 'ready', { timeoutMs: 10_000 });
    return redis;
  };
  const nodesOf = (redis: Cluster, locks: LockClient, names: readonly string[]) => {
    return new Set(names.map((name) => redis.slots[locks.lock(name).keys.slot]?.[0]));
  };

  it('takes, excludes, hands over and releases names on every node; tryAcquire leaves nothing held', async () => {
    const ra = await client();
    const a = new LockClient(ra, { prefix: 'ml' });
    const b = new LockClient(await client(), { prefix: 'ml' });
    const names = spreadNames('acct', 12);
    expect(nodesOf(ra, a, names).size).toBe(3);
    const lease = await a.multiLock(names).acquire();
    for (const name of names) {
      expect(await b.lock(name).tryAcquire()).toBeNull();
      expect(await b.lock(name).currentToken()).toBe(lease.tokens.get(name));
    }
    // A waiter on another client is woken over sharded pub/sub when the names are released.
    const waiting = b.multiLock([...names].reverse()).acquire({ waitMs: 20_000 });
    await lease.release();
    const second = await waiting;
    await second.release();
    // One busy name on one node: nothing held anywhere afterwards.
    const plain = await a.lock(names.at(-1)!).acquire();
    expect(await b.multiLock(names).tryAcquire()).toBeNull();
    expect(b.heldCount).toBe(0);
    for (const name of names.slice(0, -1)) expect(await a.lock(name).isLocked()).toBe(false);
    await plain.release();
    await a.close();
    await b.close();
  }, 60_000);

  it('two multi-locks over overlapping names in opposite orders never deadlock', async () => {
    const a = new LockClient(await client(), { prefix: 'ml-dl' });
    const b = new LockClient(await client(), { prefix: 'ml-dl' });
    const names = spreadNames('dl', 5);
    let inside = 0;
    let overlaps = 0;
    const run = async (locks: LockClient, order: string[]) => {
      for (let i = 0; i < 10; i++) {
        await locks.multiLock(order).withLock(async () => {
          inside++;
          if (inside > 1) overlaps++;
          await new Promise((resolve) => setImmediate(resolve));
          inside--;
        }, { waitMs: 60_000 });
      }
    };
    await Promise.all([run(a, names), run(b, [...names].reverse()), run(a, names.slice(1)), run(b, names.slice(0, 3).reverse())]);
    expect(overlaps).toBe(0);
    await a.close();
    await b.close();
  }, 120_000);

  it('the watchdog renews every part on its own node', async () => {
    const locks = new LockClient(await client(), { prefix: 'ml-wd' });
    const rival = new LockClient(await client(), { prefix: 'ml-wd' });
    const dog = new Watchdog(locks, { timeoutMs: 1_000 });
    const names = spreadNames('wd', 6);
    const lease = await locks.multiLock(names).acquire();
    const since = performance.now();
    while (performance.now() - since < 3 * 1_000 + 100) {
      expect(await rival.multiLock(names).tryAcquire({ leaseMs: 1_000 })).toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(lease.isHeld).toBe(true);
    await lease.release();
    await dog.stop();
    await locks.close();
    await rival.close();
  }, 60_000);
});
