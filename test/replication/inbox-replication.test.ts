import { ReplicationError } from '@holdfast/core';
import { inboxKeys } from '@holdfast/core/keys';
import { describe, expect, it } from 'vitest';
import { useReplicaPair } from './replica-pair.js';

/** The per-key inbox with `minReplicas`: a post resolves once the replica has the message. */
describe('inbox with minReplicas', () => {
  const replicas = useReplicaPair({ prefix: 'repl' });
  const client = replicas.client;

  it('with a live replica, the message is on the replica when post() resolves, and is handled', async () => {
    const pair = await replicas.start();
    const onReplica = pair.replica.client();
    // A post-only inbox: nobody handles the message, so what the replica holds can be read.
    const poster = client({ minReplicas: 1, replicaTimeoutMs: 2_000 }).inbox<string>('chat');
    expect(await poster.post('t1', 'hello')).toEqual({ position: 1 });
    const keys = inboxKeys('repl', 'chat', 't1');
    const queued = await onReplica.lrange(keys.queue, '0', '-1');
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatch(/\|"hello"$/);

    // A handling inbox with minReplicas takes the key over (its claim and renewals are
    // acknowledged) and handles it.
    const seen: string[][] = [];
    const handling = client({ minReplicas: 1, replicaTimeoutMs: 2_000 }).inbox<string>('chat', { handler: (_key, messages) => void seen.push(messages) });
    expect(await handling.recover()).toBe(1);
    await handling.drain('t1', { waitMs: 10_000 });
    expect(seen).toEqual([['hello']]);
    onReplica.disconnect();
  });

  it('with the replica cut off, post() rejects with ReplicationError; the message is stored on the primary (documented)', async () => {
    const pair = await replicas.start();
    const poster = client({ minReplicas: 1, replicaTimeoutMs: 200 }).inbox<string>('chat');
    const probe = client({}).inbox<string>('chat');
    pair.link.blackhole(true);
    const error = await poster.post('t2', 'lost?').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicationError);
    expect(await probe.pending('t2')).toBe(1);
  });
});
