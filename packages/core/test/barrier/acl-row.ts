import { LockClient, LockTimeoutError } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { expect } from 'vitest';
import { attempt, refusedAsServerError, withReadmeClients, type AclContext, type AclRow, type Outcome } from '../acl-table.js';
import { WAIT_MS, latchBarrierNeeds, latchClient } from '../latch/acl-row.js';

/** Every barrier operation: a trip, a resize, a generation broken by a party that times out. */
async function workload(ctx: AclContext, user: string, tag: string): Promise<Outcome> {
  const out: Outcome = { failures: [], broken: [] };
  const { admin } = ctx;
  const [a, b] = [latchClient(ctx, user, out), latchClient(ctx, user, out)];
  const name = `b-${tag}`;
  const arrive = (on: LockClient, parties: number, waitMs: number) => on.barrier(name, { parties }).arrive({ waitMs });
  await attempt(out, 'trip', () => Promise.all([arrive(a, 2, WAIT_MS), arrive(b, 2, WAIT_MS)]));
  await attempt(out, 'setParties', () => a.barrier(name, { parties: 2 }).setParties(3));
  let settled = false;
  const first = arrive(a, 3, WAIT_MS)
    .then(
      () => 'tripped',
      (error: unknown) => (error as { code?: string }).code ?? String(error),
    )
    .finally(() => (settled = true));
  const keys = a.barrier(name, { parties: 3 }).keys;
  await waitFor(async () => settled || (await admin.zcount(keys.parties, '-inf', '(inf')) === 1, { timeoutMs: 10_000 });
  const timedOut = await arrive(b, 3, 100).then(() => undefined, (error: unknown) => error);
  if (!(timedOut instanceof LockTimeoutError)) out.failures.push(`timeout: ${String(timedOut)}`);
  if ((await first) !== 'ERR_BARRIER_BROKEN') out.failures.push(`broken: ${await first}`);
  await attempt(out, 'state', () => a.barrier(name, { parties: 3 }).state());
  // Nothing the barrier wrote stays for ever, and what there is, is the barrier's.
  for (const key of [keys.barrier, keys.parties, keys.records]) {
    if ((await admin.pttl(key)) === -1) out.broken.push(`${key} has no TTL`);
  }
  for (const key of [keys.parties, keys.records]) {
    if ((await admin.exists(key)) === 1 && (await admin.zscore(key, '#')) === null) out.broken.push(`${key} has no mark`);
  }
  await Promise.all([a.close(), b.close()]);
  return out;
}

export const barrierAcl: AclRow = {
  kind: 'barrier',
  works: (ctx) =>
    withReadmeClients(ctx, async (la, lb) => {
      const barrier = la.barrier('acl', { parties: 2 });
      expect(await Promise.all([barrier.arrive(), lb.barrier('acl', { parties: 2 }).arrive()])).toEqual([{ generation: 0 }, { generation: 0 }]);
      expect(await barrier.setParties(3)).toBe(2);
      const broken = barrier.arrive().catch((e: unknown) => e);
      await expect(lb.barrier('acl', { parties: 3 }).arrive({ waitMs: 100 })).rejects.toThrow('Timed out');
      expect(await broken).toMatchObject({ code: 'ERR_BARRIER_BROKEN', reason: 'timeout' });
      expect(await barrier.state()).toEqual({ parties: 3, generation: 1, waiting: 0 });
    }),
  refused: refusedAsServerError('zrangebyscore', (locks) => locks.barrier('noperm', { parties: 2 }).arrive()),
  sweep: { workload, needs: latchBarrierNeeds },
};
