import { ReplicationError } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useReplicaPair } from './replica-pair.js';

/** Elections with `minReplicas`: a term is on the replica before its leader learns it leads, or nobody leads. */
describe('election with minReplicas', () => {
  const replicas = useReplicaPair();
  const client = replicas.client;

  it('with a live replica, the term and its value are on the replica when campaign() resolves, hand-offs included', async () => {
    const pair = await replicas.start();
    const [a, b] = [client({ minReplicas: 1, replicaTimeoutMs: 2_000 }), client({ minReplicas: 1, replicaTimeoutMs: 2_000 })];
    const onReplica = pair.replica.client();
    const election = a.election('repl', { termMs: 30_000 });
    const term = await election.campaign({ value: 'a' });
    expect(await onReplica.hget(election.keys.lock, '=')).toBe('a');
    const next = b.election('repl', { termMs: 30_000 }).campaign({ value: 'b' });
    await waitFor(async () => (await onReplica.llen(election.keys.queue)) === 1);
    await term.resign();
    const second = await next;
    expect(await onReplica.hget(election.keys.lock, '=')).toBe('b');
    expect(second.epoch).toBeGreaterThan(term.epoch);
    await second.resign();
    onReplica.disconnect();
  });

  it('with the replica cut off, campaign() rejects with ReplicationError and nobody leads', async () => {
    const pair = await replicas.start();
    const locks = client({ minReplicas: 1, replicaTimeoutMs: 200 });
    const probe = client({});
    pair.link.blackhole(true);
    const error = await locks.election('repl-cut', { termMs: 30_000 }).campaign({ value: 'a' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicationError);
    expect(locks.heldCount).toBe(0);
    expect(await probe.election('repl-cut').leader()).toBeNull();
    pair.link.blackhole(false);
  });
});
