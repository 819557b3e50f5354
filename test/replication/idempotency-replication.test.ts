import { ReplicationError } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { useReplicaPair } from './replica-pair.js';

/** Idempotency keys with `minReplicas`: the claim and the stored result on the replica, or no fn run. */
describe('idempotency with minReplicas', () => {
  const replicas = useReplicaPair({ prefix: 'repl' });
  const client = replicas.client;

  it('with a live replica, the claim and the stored result are on the replica when run() returns', async () => {
    const pair = await replicas.start();
    const locks = client({ minReplicas: 1, replicaTimeoutMs: 2_000 });
    const onReplica = pair.replica.client();
    let claimedOnReplica: unknown;
    const outcome = await locks.idempotency('pay').run('r', async () => {
      claimedOnReplica = await onReplica.keys('repl:{*}:idem:3:pay:r');
      return 'charged';
    });
    expect(outcome).toMatchObject({ value: 'charged', replayed: false });
    expect(claimedOnReplica).toHaveLength(1);
    const [key] = await onReplica.keys('repl:{*}:idem:3:pay:r');
    expect(await onReplica.hmget(key!, 's', 'v')).toEqual(['d', '"charged"']);
    onReplica.disconnect();
  });

  it('with the replica cut off, run() rejects with ReplicationError, fn does not run and no claim is left', async () => {
    const pair = await replicas.start();
    const locks = client({ minReplicas: 1, replicaTimeoutMs: 200 });
    const probe = client({});
    pair.link.blackhole(true);
    let ran = false;
    const error = await locks.idempotency('pay').run('r', () => (ran = true)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicationError);
    expect(ran).toBe(false);
    expect(await probe.idempotency('pay').get('r')).toBeNull();
  });
});
