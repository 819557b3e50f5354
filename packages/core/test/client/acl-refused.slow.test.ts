import { EvictionPolicyError, LockClient, fencedWrite, readFenced } from '@holdfast/core';
import { lockKeys, portOf, runScript, scripts } from '@holdfast/core/workspace';
import { readmeAcl, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The README's ACL, one command at a time less: Redis checks each command a
 * script runs when it runs, and a refused one stops the script with the writes
 * before it applied. Whatever a user lacking one command does, the state it
 * leaves must hold every synchronizer's invariants, and everything must be
 * free again once the leases ran out. The same loop derives the list: each
 * command is needed by some operation (without it something fails), and with
 * the whole list nothing does.
 */

type Kind = 'mutex' | 'rw' | 'semaphore' | 'client';
const KINDS: readonly Kind[] = ['mutex', 'rw', 'semaphore', 'client'];
/**
 * Short leases: whatever a refused call leaves behind runs out soon. Not
 * shorter: every workload runs at once, and a lease that runs out while its
 * process waits for a core (a release after it then finds the lock gone)
 * would count as a failure the refused command did not cause.
 */
const LEASE_MS = 2_000;
/** The first holders' leases, until their extend shortens them: long enough for a waiter to queue behind them. */
const FIRST_LEASE_MS = 3_000;
/** The semaphore's count in the workload. */
const COUNT = 2;

interface Outcome {
  /** What failed, per kind ('client': the client's own error events); empty: every operation worked. */
  readonly failures: Record<Kind, string[]>;
  /** Invariants the state left behind breaks (empty: none). */
  readonly broken: string[];
}

describe('a command the ACL refuses part-way leaves every synchronizer consistent', () => {
  let server: RedisServer;
  let admin: Redis;
  let subscriber: Redis;
  const acl = readmeAcl('core');
  const commands = acl.filter((a) => a.startsWith('+')).map((a) => a.slice(1));
  const rules = acl.slice(1).filter((a) => !a.startsWith('+'));
  /** Messages seen on sharded channels, by channel. */
  const announced = new Map<string, number>();

  beforeAll(async () => {
    // An evicting policy, so that the eviction check (INFO) has something to refuse.
    server = await startRedis({ configLines: ['maxmemory 1gb', 'maxmemory-policy volatile-lru'] });
    admin = server.client();
    subscriber = server.client();
    subscriber.on('smessage', (channel: string) => announced.set(channel, (announced.get(channel) ?? 0) + 1));
    await admin.call('ACL', 'SETUSER', 'all', ...rules, ...commands.map((c) => `+${c}`));
    for (const command of commands) {
      await admin.call('ACL', 'SETUSER', `no-${command}`, ...rules, ...commands.filter((c) => c !== command).map((c) => `+${c}`));
    }
  });
  afterAll(() => server.stop());

  const client = (user: string, options: { evictionCheck?: 'off' | 'refuse' } = {}) => {
    const redis = server.client({ username: user, password: 'secret' });
    const locks = new LockClient(redis, {
      prefix: 'holdfast',
      evictionCheck: options.evictionCheck ?? 'off',
      handoffTimeoutMs: LEASE_MS,
      commandTimeoutMs: 5_000,
      // Unsubscribes as soon as the last waiter of a channel left: that is part of the workload.
      subscriptionLingerMs: 0,
    });
    return { locks, redis };
  };

  /** Runs `fn`; a rejection is recorded as a failure of `kind`, never thrown. */
  const attempt = async <T,>(out: Outcome, kind: Kind, what: string, fn: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await fn();
    } catch (error) {
      out.failures[kind].push(`${what}: ${(error as Error).message}`);
      return undefined;
    }
  };

  /** A waiter, once it is queued (or already done); wrapped, so that awaiting this does not await the waiter. */
  const queuedWaiter = async <T,>(start: () => Promise<T | undefined>, queue: string, before: number) => {
    let settled = false;
    const waiting = start().finally(() => (settled = true));
    await waitFor(async () => settled || (await admin.llen(queue)) > before, { timeoutMs: 10_000 });
    return { waiting };
  };

  /** A waiter queued behind a holder gives up (abort): its queue place goes. The holder then releases. */
  const cancelled = async (
    out: Outcome,
    kind: Kind,
    hold: () => Promise<{ release(): Promise<unknown> }>,
    wait: (signal: AbortSignal) => Promise<unknown>,
    queue: string,
  ) => {
    const holder = await attempt(out, kind, 'hold', hold);
    if (!holder) return;
    const abort = new AbortController();
    const before = await admin.llen(queue);
    const { waiting } = await queuedWaiter(() => attempt(out, kind, 'aborted wait', () => wait(abort.signal)), queue, before);
    abort.abort(new Error('given up'));
    await waiting;
    out.failures[kind].pop(); // the abort itself
    await attempt(out, kind, 'release', () => holder.release());
  };

  /** The release of `channel` reached a sharded subscriber (holdfast's waiters listen there on Redis 7). */
  const announcedOn = async (out: Outcome, kind: Kind, channel: string, before: number) => {
    await waitFor(() => (announced.get(channel) ?? 0) > before, { timeoutMs: 5_000 }).catch(() =>
      out.failures[kind].push(`no message on ${channel}`),
    );
  };

  /** Every operation of every kind, through two clients of `user`; names under `tag`. */
  async function workload(user: string, tag: string): Promise<Outcome> {
    const out: Outcome = { failures: { mutex: [], rw: [], semaphore: [], client: [] }, broken: [] };
    // Clients of their own per kind, so that a failure is told apart by kind.
    const pair = (kind: Kind) => {
      const [a, b] = [client(user), client(user)];
      for (const { locks } of [a, b]) {
        locks.on('error', (error: unknown) => out.failures[kind].push(`error event: ${(error as Error).message}`));
      }
      return [a, b] as const;
    };
    const clients = { mutex: pair('mutex'), rw: pair('rw'), semaphore: pair('semaphore') };
    const [{ locks: la, redis: ra }] = clients.mutex;
    const names = { mutex: `m-${tag}`, rw: `rw-${tag}`, semaphore: `s-${tag}` };
    await Promise.all(
      [
        la.lock(names.mutex).keys.channel,
        la.readWriteLock(names.rw).read.keys.channel,
        la.semaphore(names.semaphore, { permits: COUNT }).keys.channel,
      ].map((channel) => subscriber.ssubscribe(channel)),
    );

    const mutex = async () => {
      const [{ locks: la }, { locks: lb }] = clients.mutex;
      const lock = la.lock(names.mutex);
      const lease = await attempt(out, 'mutex', 'acquire', () => lock.acquire({ leaseMs: FIRST_LEASE_MS }));
      const { waiting } = await queuedWaiter(
        () => attempt(out, 'mutex', 'wait', () => lb.lock(names.mutex).acquire({ waitMs: 5_000, leaseMs: LEASE_MS })),
        lock.keys.queue,
        0,
      );
      // The registration is written ahead of the first acquisition (SET … EX).
      if ((await admin.exists(`holdfast:client:${la.id}`)) === 0) out.failures.mutex.push('client not registered');
      if (lease) {
        await attempt(out, 'mutex', 'extend', () => lease.extend(LEASE_MS));
        const before = announced.get(lock.keys.channel) ?? 0;
        if (await attempt(out, 'mutex', 'release', () => lease.release()).then(() => true)) {
          await announcedOn(out, 'mutex', lock.keys.channel, before);
        }
      }
      const next = await waiting;
      if (next) {
        await attempt(out, 'mutex', 'fencedWrite', () => fencedWrite(ra, `holdfast:doc-${tag}`, next.token, 'v'));
        await attempt(out, 'mutex', 'readFenced', () => readFenced(ra, `holdfast:doc-${tag}`));
        await attempt(out, 'mutex', 'release', () => next.release());
      }
      // Re-entry, and a release of the inner hold only.
      await attempt(out, 'mutex', 'reenter', () =>
        lock.withLock(async () => {
          await lock.withLock(() => undefined, { leaseMs: LEASE_MS });
        }, { leaseMs: LEASE_MS }),
      );
      await cancelled(out, 'mutex', () => la.lock(names.mutex).acquire({ leaseMs: FIRST_LEASE_MS }), (signal) =>
        lb.lock(names.mutex).acquire({ signal, leaseMs: LEASE_MS }),
        lock.keys.queue,
      );
      await attempt(out, 'mutex', 'isLocked', () => lock.isLocked());
      await attempt(out, 'mutex', 'forceRelease', () => lock.forceRelease());
    };

    const rw = async () => {
      const [{ locks: la }, { locks: lb }] = clients.rw;
      const doc = la.readWriteLock(names.rw);
      const read = await attempt(out, 'rw', 'read', () => doc.read.acquire({ leaseMs: FIRST_LEASE_MS }));
      const { waiting: writer } = await queuedWaiter(
        () => attempt(out, 'rw', 'write wait', () => lb.readWriteLock(names.rw).write.acquire({ waitMs: 5_000, leaseMs: LEASE_MS })),
        doc.read.keys.queue,
        0,
      );
      if (read) {
        await attempt(out, 'rw', 'extend', () => read.extend(LEASE_MS));
        await attempt(out, 'rw', 'release', () => read.release());
      }
      const write = await writer;
      if (write) {
        await attempt(out, 'rw', 'isLocked', () => doc.write.isLocked());
        await attempt(out, 'rw', 'release', () => write.release());
      }
      await attempt(out, 'rw', 'read again', () => doc.read.acquire({ leaseMs: LEASE_MS }));
      await cancelled(out, 'rw', () => la.readWriteLock(names.rw).write.acquire({ leaseMs: FIRST_LEASE_MS }), (signal) =>
        lb.readWriteLock(names.rw).read.acquire({ signal, leaseMs: LEASE_MS }),
        doc.read.keys.queue,
      );
      await attempt(out, 'rw', 'forceRelease', () => doc.forceRelease());
    };

    const semaphore = async () => {
      const [{ locks: la }, { locks: lb }] = clients.semaphore;
      const sem = la.semaphore(names.semaphore, { permits: COUNT });
      const lease = await attempt(out, 'semaphore', 'acquire', () => sem.acquire({ permits: COUNT, leaseMs: FIRST_LEASE_MS }));
      const { waiting } = await queuedWaiter(
        () =>
          attempt(out, 'semaphore', 'wait', () =>
            lb.semaphore(names.semaphore, { permits: COUNT }).acquire({ waitMs: 5_000, leaseMs: LEASE_MS }),
          ),
        sem.keys.queue,
        0,
      );
      if (lease) {
        await attempt(out, 'semaphore', 'extend', () => lease.extend(LEASE_MS));
        const before = announced.get(sem.keys.channel) ?? 0;
        if (await attempt(out, 'semaphore', 'release', () => lease.release()).then(() => true)) {
          await announcedOn(out, 'semaphore', sem.keys.channel, before);
        }
      }
      await waiting;
      await attempt(out, 'semaphore', 'availablePermits', () => sem.availablePermits());
      await attempt(out, 'semaphore', 'setPermits', () => sem.setPermits(COUNT + 1));
      await cancelled(out, 'semaphore', () => sem.acquire({ permits: COUNT + 1, leaseMs: FIRST_LEASE_MS }), (signal) =>
        lb.semaphore(names.semaphore, { permits: COUNT + 1 }).acquire({ signal, leaseMs: LEASE_MS }),
        sem.keys.queue,
      );
      await attempt(out, 'semaphore', 'forceRelease', () => sem.forceRelease());
    };

    await Promise.all([mutex(), rw(), semaphore()]);

    // The eviction check reads INFO: on this server (volatile-lru) it refuses.
    const { locks: checked } = client(user, { evictionCheck: 'refuse' });
    const refused = await checked
      .lock(`e-${tag}`)
      .tryAcquire({ leaseMs: LEASE_MS })
      .then(
        () => false,
        (error: unknown) => error instanceof EvictionPolicyError,
      );
    if (!refused) out.failures.client.push('eviction check did not run');
    await checked.close();
    for (const [a, b] of Object.values(clients)) await Promise.all([a.locks.close(), b.locks.close()]);
    await checkState(tag, out.broken);
    return out;
  }

  /** Server time in ms. */
  const serverNow = async () => {
    const [s, us] = await admin.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };

  /** The invariants, read by an admin client, then: free again once the leases ran out. */
  async function checkState(tag: string, broken: string[]): Promise<void> {
    const full = new LockClient(admin, { prefix: 'holdfast', evictionCheck: 'off' });
    const lock = full.lock(`m-${tag}`);
    const rw = full.readWriteLock(`rw-${tag}`);
    const sem = full.semaphore(`s-${tag}`, { permits: COUNT + 1 });
    const expiring = [lock.keys.lock, lock.keys.queue, lock.keys.waiters, rw.read.keys.lock, rw.read.keys.expiry!, rw.read.keys.queue, rw.read.keys.waiters, sem.keys.queue, sem.keys.waiters];
    // Keys that must expire have a TTL.
    for (const key of expiring) {
      if ((await admin.pttl(key)) === -1) broken.push(`${key} has no TTL`);
    }
    // The semaphore: every holder has a lease end; the permits in use ('=') are the sum of the
    // holders' and never more than the count (it is only ever raised here). An entry given back
    // ('-', its deletion refused) holds nothing.
    const hash = await admin.hgetall(sem.keys.lock);
    const holders = Object.entries(hash).filter(([field, value]) => field !== '#' && field !== '=' && value !== '-');
    let used = 0;
    for (const [owner, value] of holders) {
      if (!/^\d+\|\d+$/.test(value)) broken.push(`${sem.keys.lock} ${owner}: ${value}`);
      used += Number(value.split('|')[0]);
      if ((await admin.zscore(sem.keys.expiry, owner)) === null) broken.push(`${sem.keys.lock} ${owner} has no lease end`);
    }
    const stored = hash['#'] === undefined ? undefined : Number(hash['#']);
    if (stored !== undefined && Number(hash['='] ?? 0) !== used) broken.push(`${sem.keys.lock}: '=' ${hash['=']}, the entries hold ${used}`);
    if (stored !== undefined) {
      if (used > stored) broken.push(`${sem.keys.lock}: ${used} permits held of ${stored}`);
      const counted = await full.semaphore(`s-${tag}`, { permits: stored }).availablePermits();
      const live = await liveUsed(sem.keys.lock, sem.keys.expiry);
      if (counted !== stored - live) broken.push(`${sem.keys.lock}: ${counted} available, ${stored - live} by the holders`);
    }
    // Free again once every lease ran out: a full-rights client takes everything.
    await waitFor(
      async () => {
        const now = await serverNow();
        const leases = await admin.zcount(sem.keys.expiry, `(${now}`, '+inf');
        return leases === 0 && (await admin.exists(...expiring)) === 0;
      },
      { timeoutMs: 15_000 },
    ).catch(() => broken.push(`${tag}: keys left after the leases ran out`));
    if (!(await lock.tryAcquire({ leaseMs: LEASE_MS }))) broken.push(`${lock.keys.lock} not free`);
    if (!(await rw.write.tryAcquire({ leaseMs: LEASE_MS }))) broken.push(`${rw.read.keys.lock} not free`);
    const count = stored ?? COUNT;
    if (!(await full.semaphore(`s-${tag}`, { permits: count }).tryAcquire({ permits: count, leaseMs: LEASE_MS }))) {
      broken.push(`${sem.keys.lock}: not every permit free`);
    }
    await full.close();
  }

  /** Permits held by holders whose lease runs, by server time. */
  const liveUsed = async (hashKey: string, expiryKey: string) => {
    const now = await serverNow();
    const hash = await admin.hgetall(hashKey);
    let used = 0;
    for (const [owner, value] of Object.entries(hash)) {
      if (owner === '#' || owner === '=' || value === '-') continue;
      const end = await admin.zscore(expiryKey, owner);
      if (end !== null && Number(end) > now) used += Number(value.split('|')[0]);
    }
    return used;
  };

  it('for each command of the README ACL in turn, a user without it breaks nothing; each is needed, and the whole list is enough', async () => {
    const full = await workload('all', 'all');
    expect(full).toEqual({ failures: { mutex: [], rw: [], semaphore: [], client: [] }, broken: [] });

    // EVAL is only sent when the server lacks a script (after SCRIPT FLUSH): that one runs alone.
    const parallel = commands.filter((c) => c !== 'eval');
    const outcomes = new Map<string, Outcome>();
    await Promise.all(parallel.map(async (command) => outcomes.set(command, await workload(`no-${command}`, command))));
    if (commands.includes('eval')) {
      await admin.script('FLUSH');
      outcomes.set('eval', await workload('no-eval', 'eval'));
    }
    // Whatever failed, the state stayed consistent.
    const broken = [...outcomes].flatMap(([command, outcome]) => outcome.broken.map((b) => `without ${command}: ${b}`));
    // Every command is needed by some operation of some kind.
    const needs = (kind: Kind) => commands.filter((c) => outcomes.get(c)!.failures[kind].length > 0);
    expect(broken).toEqual([]);
    const unneeded = commands.filter((c) => KINDS.every((kind) => outcomes.get(c)!.failures[kind].length === 0));
    expect(unneeded).toEqual([]);
    // The failures themselves in the message: a timing failure under load is told from a real need.
    const failuresOf = (kind: Kind, found: string[]) => JSON.stringify(found.map((c) => [c, outcomes.get(c)!.failures[kind]]));
    const zMutex = needs('mutex').filter((c) => c.startsWith('z'));
    expect(zMutex, failuresOf('mutex', zMutex)).toEqual([]);
    // The README's notes on the list: `hmget` and `z…` for read-write locks and semaphores too.
    for (const kind of ['rw', 'semaphore'] as const) {
      expect(needs(kind).filter((c) => c.startsWith('z')), failuresOf(kind, needs(kind))).not.toEqual([]);
      expect(needs(kind), failuresOf(kind, needs(kind))).toContain('hmget');
    }
  }, 240_000);

  it('a lock script refused its PEXPIRE, with nobody to clean up after it, leaves no key without a TTL', async () => {
    const redis = server.client({ username: 'no-pexpire', password: 'secret' });
    const port = portOf(redis)!;
    const k = lockKeys('holdfast', 'no-cleanup');
    const keys = [k.lock, k.queue, k.waiters, k.fence];
    // A free lock: the script creates the hash, then its PEXPIRE is refused.
    await expect(runScript(port, scripts.acquire, keys, ['A', LEASE_MS, 'r1', 'try', LEASE_MS, k.channel])).rejects.toThrow(
      /can't run this command|NOPERM/,
    );
    expect(await admin.exists(k.lock)).toBe(0);
    // take.lua, a new owner's 'try' with only the keys a free lock needs, gives its string
    // lock the lease in the SET itself: no PEXPIRE to refuse, a TTL from the start.
    expect(await runScript(port, scripts.take, [k.lock, k.queue, k.fence], ['A@r0|', LEASE_MS])).toEqual(expect.any(Number));
    expect(await admin.pttl(k.lock)).toBeGreaterThan(0);
    // A second hold turns that string into the hash, whose PEXPIRE is refused: the string goes back as it was.
    const taken = await admin.get(k.lock);
    await expect(runScript(port, scripts.acquire, keys, ['A', LEASE_MS, 'r0b', 'try', LEASE_MS, k.channel])).rejects.toThrow(
      /can't run this command|NOPERM/,
    );
    expect([await admin.type(k.lock), await admin.get(k.lock)]).toEqual(['string', taken]);
    expect(await admin.pttl(k.lock)).toBeGreaterThan(0);
    await admin.del(k.lock);
    // A busy lock: the script writes a queue entry, then its PEXPIRE is refused.
    await admin.hset(k.lock, 'B', '1', '@rb', '1');
    await admin.pexpire(k.lock, 60_000);
    await expect(runScript(port, scripts.acquire, keys, ['A', LEASE_MS, 'r2', 'join', LEASE_MS, k.channel])).rejects.toThrow(
      /can't run this command|NOPERM/,
    );
    expect([await admin.exists(k.queue), await admin.exists(k.waiters)]).toEqual([0, 0]);
    // A release that hands the lock to a waiter: the new holder's hash would get no TTL.
    await admin.rpush(k.queue, 'w1');
    await admin.hset(k.waiters, 'w1', `${Date.now() + 60_000}|${LEASE_MS}|w1|C`);
    await admin.pexpire(k.queue, 60_000);
    await admin.pexpire(k.waiters, 60_000);
    await expect(runScript(port, scripts.release, keys, ['B', 'rb2', k.channel, LEASE_MS])).rejects.toThrow(/can't run this command|NOPERM/);
    expect(await admin.pttl(k.lock)).not.toBe(-1);
    // The same through release-all.lua, a Lock's last release.
    await admin.hset(k.lock, 'B', '1', '@rb', '1');
    await admin.pexpire(k.lock, 60_000);
    await admin.rpush(k.queue, 'w2');
    await admin.hset(k.waiters, 'w2', `${Date.now() + 60_000}|${LEASE_MS}|w2|D`);
    await admin.pexpire(k.queue, 60_000);
    await admin.pexpire(k.waiters, 60_000);
    await expect(runScript(port, scripts.releaseAll, keys, ['B', `${LEASE_MS}|${k.channel}`])).rejects.toThrow(
      /can't run this command|NOPERM/,
    );
    expect(await admin.pttl(k.lock)).not.toBe(-1);
    redis.disconnect();
  });
});
