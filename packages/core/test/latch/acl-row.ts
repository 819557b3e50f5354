import { LockClient } from '@holdfast/core';
import { expect } from 'vitest';
import { attempt, refusedAsServerError, withReadmeClients, type AclContext, type AclRow, type Outcome } from '../acl-table.js';

/** Long enough that no latch of a workload expires while it runs: an expiry would look like a lost count. */
const LATCH_TTL_MS = 60_000;
export const WAIT_MS = 5_000;

/** A client of `user` for the latch and barrier workloads; its error and warning events are failures. */
export function latchClient(ctx: AclContext, user: string, out: Outcome): LockClient {
  const locks = new LockClient(ctx.server.client({ username: user, password: 'secret' }), {
    prefix: 'holdfast',
    evictionCheck: 'off',
    handoffTimeoutMs: 1_000,
    commandTimeoutMs: 5_000,
    subscriptionLingerMs: 0,
  });
  locks.on('error', (error: unknown) => out.failures.push(`error event: ${(error as Error).message}`));
  // Pub/sub refused: the client spins (wait: 'auto'), and says so once; the README's list has pub/sub for waking waiters.
  locks.on('warning', (warning) => out.failures.push(`warning event: ${warning.message}`));
  return locks;
}

/**
 * The README's notes on the list: `z…` and `hmget` for latches and barriers too, and pub/sub to
 * wake their waiters (a refused SSUBSCRIBE is the `warning` of a client that spins from then on;
 * a refused SPUBLISH fails nothing: the scripts publish by pcall).
 */
export function latchBarrierNeeds(failing: readonly string[], failuresOf: (commands: readonly string[]) => string): void {
  expect(failing.filter((c) => c.startsWith('z')), failuresOf(failing)).not.toEqual([]);
  expect(failing, failuresOf(failing)).toEqual(expect.arrayContaining(['hmget', 'ssubscribe']));
}

/**
 * Every latch operation; after each, the count Redis holds is what the calls that succeeded made
 * it. A call that fails must have changed nothing, and every latch key must keep a TTL.
 */
async function workload(ctx: AclContext, user: string, tag: string): Promise<Outcome> {
  const out: Outcome = { failures: [], broken: [] };
  const { admin } = ctx;
  const [a, b] = [latchClient(ctx, user, out), latchClient(ctx, user, out)];
  const name = `l-${tag}`;
  const latch = a.countDownLatch(name, { ttlMs: LATCH_TTL_MS });
  const other = b.countDownLatch(name, { ttlMs: LATCH_TTL_MS });
  let expected = 0;
  const check = async (what: string) => {
    const stored = Number((await admin.hget(latch.keys.latch, 'n')) ?? 0);
    if (stored !== expected) out.broken.push(`${name} after ${what}: count ${stored}, expected ${expected}`);
  };
  const set = async (on: typeof latch, count: number) => {
    if ((await attempt(out, 'trySetCount', () => on.trySetCount(count))) === true) expected = count;
    await check('trySetCount');
  };
  const countDown = async (on: typeof latch) => {
    const count = await attempt(out, 'countDown', () => on.countDown());
    if (count !== undefined) {
      expected = Math.max(0, expected - 1);
      if (count !== expected) out.broken.push(`${name}: countDown resolved to ${count}, expected ${expected}`);
    }
    await check('countDown');
  };
  await set(latch, 2);
  const waiting = attempt(out, 'wait', () => other.wait({ waitMs: WAIT_MS }));
  await countDown(latch);
  await countDown(other);
  await waiting;
  const count = await attempt(out, 'count', () => latch.count());
  if (count !== undefined && count !== expected) out.broken.push(`${name}: count() ${count}, expected ${expected}`);
  await set(latch, 1);
  if ((await attempt(out, 'delete', () => latch.delete())) === true) expected = 0;
  await check('delete');
  await set(other, 1);
  const last = expected;
  await attempt(out, 'countDownAndWait', () => latch.countDownAndWait({ waitMs: WAIT_MS }));
  const after = Number((await admin.hget(latch.keys.latch, 'n')) ?? 0);
  if (after !== last && after !== Math.max(0, last - 1)) out.broken.push(`${name} after countDownAndWait: count ${after}, from ${last}`);
  // Nothing the latch wrote stays for ever, and what there is, is the latch's.
  for (const key of [latch.keys.latch, latch.keys.requests]) {
    if ((await admin.pttl(key)) === -1) out.broken.push(`${key} has no TTL`);
  }
  if ((await admin.exists(latch.keys.requests)) === 1 && (await admin.zscore(latch.keys.requests, '#')) === null) {
    out.broken.push(`${latch.keys.requests} has no mark`);
  }
  await Promise.all([a.close(), b.close()]);
  return out;
}

export const latchAcl: AclRow = {
  kind: 'latch',
  works: (ctx) =>
    withReadmeClients(ctx, async (la, lb) => {
      const latch = la.countDownLatch('acl');
      expect(await latch.trySetCount(2)).toBe(true);
      const waiting = lb.countDownLatch('acl').wait({ waitMs: 5_000 });
      expect(await latch.countDown()).toBe(1);
      expect(await lb.countDownLatch('acl').countDown()).toBe(0);
      await waiting;
      expect(await latch.count()).toBe(0);
      await latch.trySetCount(1);
      expect(await latch.delete()).toBe(true);
    }),
  refused: refusedAsServerError('zrangebyscore', (locks) => locks.countDownLatch('noperm').countDown()),
  sweep: { workload, needs: latchBarrierNeeds },
};
