import { LockClient, RedisCommandError, fencedWrite, readFenced } from '@holdfast/core';
import { lockKeys, portOf, runScript, scripts } from '@holdfast/core/workspace';
import { waitFor } from '@holdfast/test-utils';
import { expect } from 'vitest';
import { REFUSED, announcedOn, attempt, cancelled, queuedWaiter, type AclContext, type AclRow, type Outcome } from '../acl-table.js';

/**
 * Short leases: whatever a refused call leaves behind runs out soon. Not shorter: every workload
 * runs at once, and a lease that runs out while its process waits for a core (a release after it
 * then finds the lock gone) would count as a failure the refused command did not cause.
 */
export const LEASE_MS = 2_000;
/** The first holders' leases, until their extend shortens them: long enough for a waiter to queue behind them. */
export const FIRST_LEASE_MS = 3_000;

/** A client of `user` for the one-command-less workloads; its error and warning events are failures. */
export function sweepClient(ctx: AclContext, user: string, out: Outcome) {
  const redis = ctx.server.client({ username: user, password: 'secret' });
  const locks = new LockClient(redis, {
    prefix: 'holdfast',
    evictionCheck: 'off',
    handoffTimeoutMs: LEASE_MS,
    commandTimeoutMs: 5_000,
    // Unsubscribes as soon as the last waiter of a channel left: that is part of the workload.
    subscriptionLingerMs: 0,
  });
  locks.on('error', (error: unknown) => out.failures.push(`error event: ${(error as Error).message}`));
  // Pub/sub refused: the client spins (wait: 'auto'), and says so once; the README's list has pub/sub for waking waiters.
  locks.on('warning', (warning) => out.failures.push(`warning event: ${warning.message}`));
  return { locks, redis };
}

/** Keys that must carry a TTL have one; once every lease ran out they are gone and `take` gets the lock. */
export async function freeAgain(ctx: AclContext, tag: string, keys: readonly string[], take: () => Promise<unknown>, out: Outcome) {
  for (const key of keys) {
    if ((await ctx.admin.pttl(key)) === -1) out.broken.push(`${key} has no TTL`);
  }
  await waitFor(async () => (await ctx.admin.exists(...keys)) === 0, { timeoutMs: 15_000 }).catch(() =>
    out.broken.push(`${tag}: keys left after the leases ran out`),
  );
  if (!(await take())) out.broken.push(`${keys[0]} not free`);
}

async function workload(ctx: AclContext, user: string, tag: string): Promise<Outcome> {
  const out: Outcome = { failures: [], broken: [] };
  const [{ locks: la, redis: ra }, { locks: lb }] = [sweepClient(ctx, user, out), sweepClient(ctx, user, out)];
  const name = `m-${tag}`;
  const lock = la.lock(name);
  await ctx.subscriber.ssubscribe(lock.keys.channel);
  const lease = await attempt(out, 'acquire', () => lock.acquire({ leaseMs: FIRST_LEASE_MS }));
  const { waiting } = await queuedWaiter(ctx.admin, () => attempt(out, 'wait', () => lb.lock(name).acquire({ waitMs: 5_000, leaseMs: LEASE_MS })), lock.keys.queue, 0);
  // The registration is written ahead of the first acquisition (SET … EX).
  if ((await ctx.admin.exists(`holdfast:client:${la.id}`)) === 0) out.failures.push('client not registered');
  if (lease) {
    await attempt(out, 'extend', () => lease.extend(LEASE_MS));
    const before = ctx.announced.get(lock.keys.channel) ?? 0;
    if (await attempt(out, 'release', () => lease.release()).then(() => true)) await announcedOn(ctx, out, lock.keys.channel, before);
  }
  const next = await waiting;
  if (next) {
    await attempt(out, 'fencedWrite', () => fencedWrite(ra, `holdfast:doc-${tag}`, next.token, 'v'));
    await attempt(out, 'readFenced', () => readFenced(ra, `holdfast:doc-${tag}`));
    await attempt(out, 'release', () => next.release());
  }
  // Re-entry, and a release of the inner hold only.
  await attempt(out, 'reenter', () =>
    lock.withLock(async () => {
      await lock.withLock(() => undefined, { leaseMs: LEASE_MS });
    }, { leaseMs: LEASE_MS }),
  );
  await cancelled(ctx, out, () => la.lock(name).acquire({ leaseMs: FIRST_LEASE_MS }), (signal) => lb.lock(name).acquire({ signal, leaseMs: LEASE_MS }), lock.keys.queue);
  await attempt(out, 'isLocked', () => lock.isLocked());
  await attempt(out, 'forceRelease', () => lock.forceRelease());
  await Promise.all([la.close(), lb.close()]);
  const full = new LockClient(ctx.admin, { prefix: 'holdfast', evictionCheck: 'off' });
  const check = full.lock(name);
  await freeAgain(ctx, tag, [check.keys.lock, check.keys.queue, check.keys.waiters], () => check.tryAcquire({ leaseMs: LEASE_MS }), out);
  await full.close();
  return out;
}

export const mutexAcl: AclRow = {
  kind: 'mutex',
  async works(ctx) {
    const a = ctx.server.client({ username: 'locks', password: 'secret' });
    const b = ctx.server.client({ username: 'locks', password: 'secret' });
    const errors: unknown[] = [];
    const la = new LockClient(a);
    const lb = new LockClient(b);
    la.on('error', (e) => errors.push(e));
    lb.on('error', (e) => errors.push(e));
    const lease = await la.lock('acl').acquire();
    const waiting = lb.lock('acl').acquire({ waitMs: 5_000 });
    await new Promise((r) => setTimeout(r, 50));
    await lease.extend(10_000);
    expect(await lb.lock('acl').isLocked()).toBe(true);
    await lease.release();
    const next = await waiting;
    expect(next.token).toBeGreaterThan(lease.token);
    expect(await fencedWrite(a, 'holdfast:doc', next.token, 'v')).toBe(true);
    expect(await readFenced(a, 'holdfast:doc')).toEqual({ token: next.token, value: 'v' });
    expect(await la.lock('acl').forceRelease()).toBe(true);
    expect(errors).toEqual([]);
    // Outside the prefix, the same user is refused.
    await expect(a.get('other:key')).rejects.toThrow(/NOPERM/);
    await la.close();
    await lb.close();
  },
  refused: {
    command: 'incr',
    title: 'a missing permission is a RedisCommandError quoting the server, at once, not a timeout',
    async check(ctx, user) {
      const redis = ctx.server.client({ username: user, password: 'secret' });
      const locks = new LockClient(redis, { commandTimeoutMs: 20_000 });
      const started = performance.now();
      const error = await locks.lock('acl-noperm').acquire({ waitMs: 30_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisCommandError);
      // Redis 7.0 words it as a script error: the server's own text is quoted.
      expect((error as Error).message).toMatch(REFUSED);
      // Not retried until the wait ran out: an error reply is final.
      expect(performance.now() - started).toBeLessThan(15_000);
      await locks.close();
      redis.disconnect();
    },
  },
  sweep: {
    workload,
    // Mutexes run no sorted-set command.
    needs: (failing, failuresOf) => {
      const z = failing.filter((c) => c.startsWith('z'));
      expect(z, failuresOf(z)).toEqual([]);
    },
  },
  also: {
    'a lock script refused its PEXPIRE, with nobody to clean up after it, leaves no key without a TTL': async (ctx) => {
      const { admin } = ctx;
      const redis = ctx.server.client({ username: 'no-pexpire', password: 'secret' });
      const port = portOf(redis)!;
      const k = lockKeys('holdfast', 'no-cleanup');
      const keys = [k.lock, k.queue, k.waiters, k.fence];
      // A free lock: the script creates the hash, then its PEXPIRE is refused.
      await expect(runScript(port, scripts.acquire, keys, ['A', LEASE_MS, 'r1', 'try', LEASE_MS, k.channel])).rejects.toThrow(REFUSED);
      expect(await admin.exists(k.lock)).toBe(0);
      // take.lua, a new owner's 'try' with only the keys a free lock needs, gives its string
      // lock the lease in the SET itself: no PEXPIRE to refuse, a TTL from the start.
      expect(await runScript(port, scripts.take, [k.lock, k.queue, k.fence], ['A@r0|', LEASE_MS])).toEqual(expect.any(Number));
      expect(await admin.pttl(k.lock)).toBeGreaterThan(0);
      // A second hold turns that string into the hash, whose PEXPIRE is refused: the string goes back as it was.
      const taken = await admin.get(k.lock);
      await expect(runScript(port, scripts.acquire, keys, ['A', LEASE_MS, 'r0b', 'try', LEASE_MS, k.channel])).rejects.toThrow(REFUSED);
      expect([await admin.type(k.lock), await admin.get(k.lock)]).toEqual(['string', taken]);
      expect(await admin.pttl(k.lock)).toBeGreaterThan(0);
      await admin.del(k.lock);
      // A busy lock: the script writes a queue entry, then its PEXPIRE is refused.
      await admin.hset(k.lock, 'B', '1', '@rb', '1');
      await admin.pexpire(k.lock, 60_000);
      await expect(runScript(port, scripts.acquire, keys, ['A', LEASE_MS, 'r2', 'join', LEASE_MS, k.channel])).rejects.toThrow(REFUSED);
      expect([await admin.exists(k.queue), await admin.exists(k.waiters)]).toEqual([0, 0]);
      // A release that hands the lock to a waiter: the new holder's hash would get no TTL.
      await admin.rpush(k.queue, 'w1');
      await admin.hset(k.waiters, 'w1', `${Date.now() + 60_000}|${LEASE_MS}|w1|C`);
      await admin.pexpire(k.queue, 60_000);
      await admin.pexpire(k.waiters, 60_000);
      await expect(runScript(port, scripts.release, keys, ['B', 'rb2', k.channel, LEASE_MS])).rejects.toThrow(REFUSED);
      expect(await admin.pttl(k.lock)).not.toBe(-1);
      // The same through release-all.lua, a Lock's last release.
      await admin.hset(k.lock, 'B', '1', '@rb', '1');
      await admin.pexpire(k.lock, 60_000);
      await admin.rpush(k.queue, 'w2');
      await admin.hset(k.waiters, 'w2', `${Date.now() + 60_000}|${LEASE_MS}|w2|D`);
      await admin.pexpire(k.queue, 60_000);
      await admin.pexpire(k.waiters, 60_000);
      await expect(runScript(port, scripts.releaseAll, keys, ['B', `${LEASE_MS}|${k.channel}`])).rejects.toThrow(REFUSED);
      expect(await admin.pttl(k.lock)).not.toBe(-1);
      redis.disconnect();
    },
  },
};
