import { describe, expect, it } from 'vitest';
import { LockClient } from '@holdfast/core';
import { lockKeys } from '@holdfast/core/internal';
import { uniqueName, useProxiedServer, waitFor } from '@holdfast/test-utils';

/**
 * The final release is applied and hands the lock to a queued waiter, its
 * reply is lost, ioredis resends it, and the resend finds the lock held by
 * that waiter: still our own release, not a loss (no `lost`, no throw). Found
 * by the proxy and crash storms of the fault-injection suite.
 */
describe('release resent after a hand-off', () => {
  const fx = useProxiedServer();

  it('does not report the released lease lost when its release reply was lost and the lock went to a waiter', async () => {
    const prefix = uniqueName('resend');
    const name = 'handoff-resend';
    const viaProxy = fx.throughProxy();
    const direct = fx.server.client();
    const admin = fx.server.client();
    const holder = new LockClient(viaProxy, { prefix });
    const waiter = new LockClient(direct, { prefix });
    const lost: string[] = [];
    holder.on('lost', ({ reason }) => lost.push(reason));
    try {
      // Load the scripts first, so the dropped reply is the applied release, not a NOSCRIPT.
      await (await holder.lock('warm-up').acquire({ leaseMs: 10_000 })).release();
      const lease = await holder.lock(name).acquire({ leaseMs: 10_000 });
      const next = waiter.lock(name).acquire({ leaseMs: 10_000, waitMs: 10_000 });
      await waitFor(async () => (await admin.exists(lockKeys(prefix, name).queue)) === 1);
      const dropped = fx.proxy.dropNextReply();
      const released = await lease.release().then(
        () => 'released',
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
      await dropped;
      const nextLease = await next;
      await nextLease.release();
      expect(released).toBe('released');
      expect(lost).toEqual([]);
    } finally {
      await holder.close();
      await waiter.close();
      viaProxy.disconnect();
      direct.disconnect();
      admin.disconnect();
    }
  });
});
