import { ReplicationError, lockKeys } from '@holdfast/core/workspace';
import { describe, expect, it } from 'vitest';
import { useReplicaPair } from './replica-pair.js';

/** Names whose lock keys share one hash slot, then one in another slot. */
function mixedNames(base: string): string[] {
  const slot = lockKeys('p', `${base}-0`).slot;
  const names = [`${base}-0`];
  let other: string | undefined;
  for (let i = 1; names.length < 2 || other === undefined; i++) {
    const name = `${base}-${i}`;
    if (lockKeys('p', name).slot === slot) {
      if (names.length < 2) names.push(name);
    } else other ??= name;
  }
  return [...names, other];
}

/** Multi-locks with `minReplicas`: every part on the replica before the lease is handed out, or nothing held. */
describe('multi-lock with minReplicas', () => {
  const replicas = useReplicaPair();
  const client = replicas.client;

  it('with a live replica, every part is on the replica when acquire() returns', async () => {
    const pair = await replicas.start();
    const locks = client({ minReplicas: 1, replicaTimeoutMs: 2_000 });
    const onReplica = pair.replica.client();
    const names = mixedNames('repl');
    const lease = await locks.multiLock(names).acquire();
    for (const name of names) expect(await onReplica.exists(locks.lock(name).keys.lock)).toBe(1);
    await lease.release();
    onReplica.disconnect();
  });

  it('with the replica cut off, acquire() rejects with ReplicationError and holds nothing', async () => {
    const pair = await replicas.start();
    const locks = client({ minReplicas: 1, replicaTimeoutMs: 200 });
    const probe = client({});
    pair.link.blackhole(true);
    // One same-slot group (the group script's path), then names over several slots.
    for (const names of [mixedNames('repl-cut').slice(0, 2), mixedNames('repl-cut-x')]) {
      const error = await locks.multiLock(names).acquire({ leaseMs: 30_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplicationError);
      expect(locks.heldCount).toBe(0);
      for (const name of names) expect(await probe.lock(name).isLocked()).toBe(false);
    }
    pair.link.blackhole(false);
  });
});
