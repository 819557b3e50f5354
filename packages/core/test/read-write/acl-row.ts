import { LockClient } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { expect } from 'vitest';
import { attempt, cancelled, queuedWaiter, type AclContext, type AclRow, type Outcome } from '../acl-table.js';
import { FIRST_LEASE_MS, LEASE_MS, freeAgain, sweepClient } from '../mutex/acl-row.js';

async function workload(ctx: AclContext, user: string, tag: string): Promise<Outcome> {
  const out: Outcome = { failures: [], broken: [] };
  const [{ locks: la }, { locks: lb }] = [sweepClient(ctx, user, out), sweepClient(ctx, user, out)];
  const name = `rw-${tag}`;
  const doc = la.readWriteLock(name);
  await ctx.subscriber.ssubscribe(doc.read.keys.channel);
  const read = await attempt(out, 'read', () => doc.read.acquire({ leaseMs: FIRST_LEASE_MS }));
  const { waiting: writer } = await queuedWaiter(
    ctx.admin,
    () => attempt(out, 'write wait', () => lb.readWriteLock(name).write.acquire({ waitMs: 5_000, leaseMs: LEASE_MS })),
    doc.read.keys.queue,
    0,
  );
  if (read) {
    await attempt(out, 'extend', () => read.extend(LEASE_MS));
    await attempt(out, 'release', () => read.release());
  }
  const write = await writer;
  if (write) {
    await attempt(out, 'isLocked', () => doc.write.isLocked());
    await attempt(out, 'release', () => write.release());
  }
  await attempt(out, 'read again', () => doc.read.acquire({ leaseMs: LEASE_MS }));
  await cancelled(ctx, out, () => la.readWriteLock(name).write.acquire({ leaseMs: FIRST_LEASE_MS }), (signal) =>
    lb.readWriteLock(name).read.acquire({ signal, leaseMs: LEASE_MS }),
    doc.read.keys.queue,
  );
  await attempt(out, 'forceRelease', () => doc.forceRelease());
  await Promise.all([la.close(), lb.close()]);
  const full = new LockClient(ctx.admin, { prefix: 'holdfast', evictionCheck: 'off' });
  const rw = full.readWriteLock(name);
  const keys = [rw.read.keys.lock, rw.read.keys.expiry!, rw.read.keys.queue, rw.read.keys.waiters];
  await freeAgain(ctx, tag, keys, () => rw.write.tryAcquire({ leaseMs: LEASE_MS }), out);
  await full.close();
  return out;
}

export const readWriteAcl: AclRow = {
  kind: 'read-write',
  async works(ctx) {
    const a = ctx.server.client({ username: 'locks', password: 'secret' });
    const b = ctx.server.client({ username: 'locks', password: 'secret' });
    const admin = ctx.server.client();
    const errors: unknown[] = [];
    const la = new LockClient(a);
    const lb = new LockClient(b);
    la.on('error', (e) => errors.push(e));
    lb.on('error', (e) => errors.push(e));
    const doc = la.readWriteLock('acl');
    const read = await doc.read.acquire();
    const writer = lb.readWriteLock('acl').write.acquire({ waitMs: 5_000 });
    await waitFor(async () => (await admin.llen(doc.read.keys.queue)) === 1);
    const readers = [lb.readWriteLock('acl').read.acquire({ waitMs: 5_000 }), lb.readWriteLock('acl').read.acquire({ waitMs: 5_000 })];
    await waitFor(async () => (await admin.llen(doc.read.keys.queue)) === 3);
    await read.extend(10_000);
    await read.release();
    const w = await writer;
    expect(await doc.write.isLocked()).toBe(true);
    await w.release();
    for (const lease of await Promise.all(readers)) await lease.release();
    await doc.write.withLock(async () => {
      await (await doc.read.acquire()).release();
    });
    await doc.read.acquire();
    expect(await doc.forceRelease()).toBe(true);
    expect(errors).toEqual([]);
    await la.close();
    await lb.close();
    admin.disconnect();
  },
  sweep: {
    workload,
    // The README's notes on the list: `hmget` and `z…` for read-write locks too.
    needs: (failing, failuresOf) => {
      expect(failing.filter((c) => c.startsWith('z')), failuresOf(failing)).not.toEqual([]);
      expect(failing, failuresOf(failing)).toContain('hmget');
    },
  },
};
