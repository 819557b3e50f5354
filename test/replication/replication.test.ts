import { LockClient, ReplicationError, type Lease } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { startRedisReplicaPair, waitForRole, type RedisReplicaPair } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

/** The hold count stored in a lock hash (its one field that is not an `@` field). */
async function holdCountOn(redis: Redis, key: string): Promise<number | undefined> {
  const fields = await redis.hgetall(key);
  const owner = Object.keys(fields).find((f) => !f.startsWith('@'));
  return owner === undefined ? undefined : Number(fields[owner]);
}

/**
 * A primary with a replica, failed over by hand: the replication link is cut
 * so the replica misses a write, the primary is killed, the replica promoted. The unsafe
 * outcome is reproduced without `minReplicas` and prevented with it.
 */
describe('failover to a replica', () => {
  let pair: RedisReplicaPair | undefined;
  const clients: LockClient[] = [];
  const errors: unknown[] = [];
  const client = (server: RedisReplicaPair['primary'], options?: ConstructorParameters<typeof LockClient>[1]) => {
    const locks = new LockClient(server.client({ maxRetriesPerRequest: 1 }), { commandTimeoutMs: 1_000, ...options });
    locks.on('error', (e) => errors.push(e));
    clients.push(locks);
    return locks;
  };
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    pair?.replica.resume();
    await pair?.stop();
    pair = undefined;
    errors.length = 0;
  });

  /** Cut the replication link, let `take` write on the primary, kill the primary, promote the replica. */
  async function failOverLosingWrites<T>(take: () => Promise<T>): Promise<T> {
    pair!.link.blackhole(true);
    try {
      return await take();
    } finally {
      await pair!.primary.kill();
      await pair!.promoteReplica();
    }
  }

  it('without minReplicas, a lock taken just before the failover is granted again (two holders)', async () => {
    pair = await startRedisReplicaPair();
    const a = client(pair.primary);
    const first = await failOverLosingWrites(() => a.lock('order:1').acquire({ leaseMs: 30_000 }));
    const b = client(pair.replica);
    const second = await b.lock('order:1').tryAcquire({ leaseMs: 30_000 });
    // Both believe they hold the lock: exactly what minReplicas is for.
    expect(first.isHeld).toBe(true);
    expect(second).not.toBeNull();
    expect(second!.isHeld).toBe(true);
  });

  it('with minReplicas, the acquisition fails with ReplicationError and is undone, so nobody holds it twice', async () => {
    pair = await startRedisReplicaPair();
    const a = client(pair.primary, { minReplicas: 1, replicaTimeoutMs: 200 });
    let taken: Lease | undefined;
    const failure = await failOverLosingWrites(async () => {
      const error = await a.lock('order:2').acquire({ leaseMs: 30_000 }).then(
        (lease) => {
          taken = lease;
          return undefined;
        },
        (e: unknown) => e,
      );
      // Undone on the primary before the error came back.
      const probe = client(pair!.primary);
      expect(await probe.lock('order:2').isLocked()).toBe(false);
      return error;
    });
    expect(taken).toBeUndefined();
    expect(failure).toBeInstanceOf(ReplicationError);
    expect(failure).toMatchObject({ code: 'ERR_REPLICATION', acknowledged: 0, required: 1, lockName: 'order:2' });
    expect(a.heldCount).toBe(0);
    const b = client(pair.replica);
    expect(await b.lock('order:2').tryAcquire()).not.toBeNull();
  });

  it('with minReplicas and a live replica, acquire, re-entry and extend reach the replica before they return', async () => {
    pair = await startRedisReplicaPair();
    const a = client(pair.primary, { minReplicas: 1, replicaTimeoutMs: 2_000 });
    const onReplica = pair.replica.client();
    await a.lock('order:3').withLock(async (outer) => {
      const key = a.lock('order:3').keys.lock;
      expect(await onReplica.exists(key)).toBe(1);
      await a.lock('order:3').withLock(async (inner) => {
        expect(inner.holdCount).toBe(2);
        expect(await holdCountOn(onReplica, key)).toBe(2);
      });
      await outer.extend(60_000);
      expect(await onReplica.pttl(key)).toBeGreaterThan(30_000);
      // A paused replica: the extension is refused (the lease itself is not lost).
      pair!.replica.pause();
      try {
        await expect(outer.extend(120_000)).rejects.toBeInstanceOf(ReplicationError);
      } finally {
        pair!.replica.resume();
      }
      expect(outer.isHeld).toBe(true);
    });
    expect(errors).toEqual([]);
  });

  it('with minReplicas, a waiter handed the lock starts only once the replica has it', async () => {
    pair = await startRedisReplicaPair();
    const a = client(pair.primary, { minReplicas: 1, replicaTimeoutMs: 2_000 });
    const b = client(pair.primary, { minReplicas: 1, replicaTimeoutMs: 2_000 });
    const onReplica = pair.replica.client();
    const held = await a.lock('order:4').acquire();
    const waiting = b.lock('order:4').acquire({ waitMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    await held.release();
    const next = await waiting;
    expect(await holdCountOn(onReplica, a.lock('order:4').keys.lock)).toBe(1);
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
    expect(errors).toEqual([]);
  });

  it('with minReplicas, renewals the replica does not acknowledge fail, and the lease is reported lost before it expires', async () => {
    pair = await startRedisReplicaPair();
    // WAIT timeout generous for the acquire on a busy machine; renewals every
    // 500 ms, so the first refused one is reported seconds before the 4 s lease ends.
    const a = client(pair.primary, { minReplicas: 1, replicaTimeoutMs: 1_000 });
    const dog = new Watchdog(a, { timeoutMs: 4_000, renewIntervalMs: 500 });
    const failures: unknown[] = [];
    dog.on('renewalFailed', (e) => failures.push(e.error));
    const lost: { reason: string; at: number }[] = [];
    a.on('lost', (e) => lost.push({ reason: e.reason, at: performance.now() }));
    const lease = await a.lock('order:5').acquire();
    const acquiredAt = performance.now();
    pair.replica.pause();
    try {
      await new Promise((r) => setTimeout(r, 5_000));
    } finally {
      pair.replica.resume();
    }
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((f) => f instanceof ReplicationError)).toBe(true);
    expect(lease.isHeld).toBe(false);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.reason).toBe('unreachable');
    // No renewal counted since the acquire: lost within its 4 s, before the key could expire.
    expect(lost[0]!.at - acquiredAt).toBeLessThan(4_000);
    await dog.stop();
  });

  it('a coordinated FAILOVER keeps held locks; a client left on the old primary gets typed errors and its lease is reported lost in time', async () => {
    pair = await startRedisReplicaPair();
    const a = client(pair.primary, { commandTimeoutMs: 500, retries: 2 });
    // A 3 s lease: the key outlives the switch even on a busy machine.
    const dog = new Watchdog(a, { timeoutMs: 3_000 });
    const lost: string[] = [];
    a.on('lost', (e) => lost.push(e.reason));
    const lease = await a.lock('order:6').acquire();
    const admin = pair.primary.client();
    await admin.call('FAILOVER');
    await waitForRole(pair.replica.client(), 'master');
    // The new primary has the lock: nobody else gets it.
    const b = client(pair.replica);
    expect(await b.lock('order:6').tryAcquire()).toBeNull();
    // The old primary is a replica now: writes answer READONLY, retried, then a typed error.
    const refused = await a.lock('order:7').acquire().catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'ERR_REDIS' });
    expect(String((refused as Error).message)).toMatch(/READONLY/);
    // Renewals meet READONLY from now on: the lease is reported lost at its deadline.
    await new Promise((r) => setTimeout(r, 3_200));
    expect(lease.isHeld).toBe(false);
    expect(lost).toEqual(['unreachable']);
    await dog.stop();
  });
});
