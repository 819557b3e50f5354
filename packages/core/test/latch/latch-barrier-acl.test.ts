import { KeyConflictError, LockClient, LockTimeoutError, RedisCommandError } from '@holdfast/core';
import { readmeAcl, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The minimal ACL documented in the README (read from it) covers every latch and barrier operation. */
describe('minimal ACL: latch and barrier', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core'));
    // The same rights less one command both scripts run.
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core').map((a) => (a === 'locks' ? 'nozset' : a)).filter((a) => a !== '+zrangebyscore'));
    admin.disconnect();
  });
  afterAll(() => server.stop());

  it('sets, counts down, waits, deletes; arrives, trips, breaks, resizes', async () => {
    const la = new LockClient(server.client({ username: 'locks', password: 'secret' }));
    const lb = new LockClient(server.client({ username: 'locks', password: 'secret' }));
    const errors: unknown[] = [];
    la.on('error', (e) => errors.push(e));
    lb.on('error', (e) => errors.push(e));
    const latch = la.countDownLatch('acl');
    expect(await latch.trySetCount(2)).toBe(true);
    const waiting = lb.countDownLatch('acl').wait({ waitMs: 5_000 });
    expect(await latch.countDown()).toBe(1);
    expect(await lb.countDownLatch('acl').countDown()).toBe(0);
    await waiting;
    expect(await latch.count()).toBe(0);
    await latch.trySetCount(1);
    expect(await latch.delete()).toBe(true);
    const barrier = la.barrier('acl', { parties: 2 });
    expect(await Promise.all([barrier.arrive(), lb.barrier('acl', { parties: 2 }).arrive()])).toEqual([{ generation: 0 }, { generation: 0 }]);
    expect(await barrier.setParties(3)).toBe(2);
    const broken = barrier.arrive().catch((e: unknown) => e);
    await expect(lb.barrier('acl', { parties: 3 }).arrive({ waitMs: 100 })).rejects.toThrow('Timed out');
    expect(await broken).toMatchObject({ code: 'ERR_BARRIER_BROKEN', reason: 'timeout' });
    expect(await barrier.state()).toEqual({ parties: 3, generation: 1, waiting: 0 });
    expect(errors).toEqual([]);
    await la.close();
    await lb.close();
  });

  it("a missing permission is the server's error, not foreign data", async () => {
    const locks = new LockClient(server.client({ username: 'nozset', password: 'secret' }));
    locks.on('error', () => undefined);
    for (const call of [() => locks.countDownLatch('noperm').countDown(), () => locks.barrier('noperm', { parties: 2 }).arrive()]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisCommandError);
      expect(error).not.toBeInstanceOf(KeyConflictError);
      expect(String((error as Error).message)).toMatch(/can't run this command|NOPERM/);
    }
    await locks.close();
  });
});

type Kind = 'latch' | 'barrier';

interface Outcome {
  /** What failed, per kind (each kind's clients' error events included); empty: every operation worked. */
  readonly failures: Record<Kind, string[]>;
  /** Invariants the state left behind breaks (empty: none). */
  readonly broken: string[];
}

/** Long enough that no latch of a workload expires while it runs: an expiry would look like a lost count. */
const LATCH_TTL_MS = 60_000;
const WAIT_MS = 5_000;

/**
 * The README's ACL, one command less at a time, for latches and barriers (as
 * acl-refused.test.ts does for the other kinds): a refused command stops a
 * script with the writes before it applied. A call that fails must have
 * changed nothing, every latch key must keep a TTL, and each kind's needs are
 * derived from what failed, for the README's notes on the list.
 */
describe('a command the ACL refuses part-way leaves every latch and barrier consistent', () => {
  let server: RedisServer;
  let admin: Redis;
  const acl = readmeAcl('core');
  const commands = acl.filter((a) => a.startsWith('+')).map((a) => a.slice(1));
  const rules = acl.slice(1).filter((a) => !a.startsWith('+'));
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
    await admin.call('ACL', 'SETUSER', 'all', ...rules, ...commands.map((c) => `+${c}`));
    for (const command of commands) {
      await admin.call('ACL', 'SETUSER', `no-${command}`, ...rules, ...commands.filter((c) => c !== command).map((c) => `+${c}`));
    }
  });
  afterAll(() => server.stop());

  const client = (user: string, onError: (error: unknown) => void) => {
    const locks = new LockClient(server.client({ username: user, password: 'secret' }), {
      prefix: 'holdfast',
      evictionCheck: 'off',
      handoffTimeoutMs: 1_000,
      commandTimeoutMs: 5_000,
      subscriptionLingerMs: 0,
    });
    locks.on('error', onError);
    return locks;
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

  /** Every latch operation; after each, the count Redis holds is what the calls that succeeded made it. */
  async function latchWorkload(out: Outcome, a: LockClient, b: LockClient, name: string): Promise<void> {
    const latch = a.countDownLatch(name, { ttlMs: LATCH_TTL_MS });
    const other = b.countDownLatch(name, { ttlMs: LATCH_TTL_MS });
    let expected = 0;
    const check = async (what: string) => {
      const stored = Number((await admin.hget(latch.keys.latch, 'n')) ?? 0);
      if (stored !== expected) out.broken.push(`${name} after ${what}: count ${stored}, expected ${expected}`);
    };
    const set = async (on: typeof latch, count: number) => {
      if ((await attempt(out, 'latch', 'trySetCount', () => on.trySetCount(count))) === true) expected = count;
      await check('trySetCount');
    };
    const countDown = async (on: typeof latch) => {
      const count = await attempt(out, 'latch', 'countDown', () => on.countDown());
      if (count !== undefined) {
        expected = Math.max(0, expected - 1);
        if (count !== expected) out.broken.push(`${name}: countDown resolved to ${count}, expected ${expected}`);
      }
      await check('countDown');
    };
    await set(latch, 2);
    const waiting = attempt(out, 'latch', 'wait', () => other.wait({ waitMs: WAIT_MS }));
    await countDown(latch);
    await countDown(other);
    await waiting;
    const count = await attempt(out, 'latch', 'count', () => latch.count());
    if (count !== undefined && count !== expected) out.broken.push(`${name}: count() ${count}, expected ${expected}`);
    await set(latch, 1);
    if ((await attempt(out, 'latch', 'delete', () => latch.delete())) === true) expected = 0;
    await check('delete');
    await set(other, 1);
    const last = expected;
    await attempt(out, 'latch', 'countDownAndWait', () => latch.countDownAndWait({ waitMs: WAIT_MS }));
    const after = Number((await admin.hget(latch.keys.latch, 'n')) ?? 0);
    if (after !== last && after !== Math.max(0, last - 1)) out.broken.push(`${name} after countDownAndWait: count ${after}, from ${last}`);
    // Nothing the latch wrote stays for ever, and what there is, is the latch's.
    for (const key of [latch.keys.latch, latch.keys.requests]) {
      if ((await admin.pttl(key)) === -1) out.broken.push(`${key} has no TTL`);
    }
    if ((await admin.exists(latch.keys.requests)) === 1 && (await admin.zscore(latch.keys.requests, '#')) === null) {
      out.broken.push(`${latch.keys.requests} has no mark`);
    }
  }

  /** Every barrier operation: a trip, a resize, a generation broken by a party that times out. */
  async function barrierWorkload(out: Outcome, a: LockClient, b: LockClient, name: string): Promise<void> {
    const arrive = (on: LockClient, parties: number, waitMs: number) => on.barrier(name, { parties }).arrive({ waitMs });
    await attempt(out, 'barrier', 'trip', () => Promise.all([arrive(a, 2, WAIT_MS), arrive(b, 2, WAIT_MS)]));
    await attempt(out, 'barrier', 'setParties', () => a.barrier(name, { parties: 2 }).setParties(3));
    let settled = false;
    const first = arrive(a, 3, WAIT_MS).then(
      () => 'tripped',
      (error: unknown) => (error as { code?: string }).code ?? String(error),
    ).finally(() => (settled = true));
    const keys = a.barrier(name, { parties: 3 }).keys;
    await waitFor(async () => settled || (await admin.zcount(keys.parties, '-inf', '(inf')) === 1, { timeoutMs: 10_000 });
    const timedOut = await arrive(b, 3, 100).then(() => undefined, (error: unknown) => error);
    if (!(timedOut instanceof LockTimeoutError)) out.failures.barrier.push(`timeout: ${String(timedOut)}`);
    if ((await first) !== 'ERR_BARRIER_BROKEN') out.failures.barrier.push(`broken: ${await first}`);
    await attempt(out, 'barrier', 'state', () => a.barrier(name, { parties: 3 }).state());
    // Nothing the barrier wrote stays for ever, and what there is, is the barrier's.
    for (const key of [keys.barrier, keys.parties, keys.records]) {
      if ((await admin.pttl(key)) === -1) out.broken.push(`${key} has no TTL`);
    }
    for (const key of [keys.parties, keys.records]) {
      if ((await admin.exists(key)) === 1 && (await admin.zscore(key, '#')) === null) out.broken.push(`${key} has no mark`);
    }
  }

  async function workload(user: string, tag: string): Promise<Outcome> {
    const out: Outcome = { failures: { latch: [], barrier: [] }, broken: [] };
    const pair = (kind: Kind) =>
      [0, 1].map(() => client(user, (error) => out.failures[kind].push(`error event: ${(error as Error).message}`))) as [LockClient, LockClient];
    const latches = pair('latch');
    const barriers = pair('barrier');
    await Promise.all([latchWorkload(out, ...latches, `l-${tag}`), barrierWorkload(out, ...barriers, `b-${tag}`)]);
    await Promise.all([...latches, ...barriers].map((locks) => locks.close()));
    return out;
  }

  it('for each command of the README ACL in turn; what each kind needs is what the README says', async () => {
    expect(await workload('all', 'all')).toEqual({ failures: { latch: [], barrier: [] }, broken: [] });
    // EVAL is only sent when the server lacks a script (after SCRIPT FLUSH): that one runs alone.
    const outcomes = new Map<string, Outcome>();
    await Promise.all(commands.filter((c) => c !== 'eval').map(async (command) => outcomes.set(command, await workload(`no-${command}`, command))));
    await admin.script('FLUSH');
    outcomes.set('eval', await workload('no-eval', 'eval'));

    const broken = [...outcomes].flatMap(([command, outcome]) => outcome.broken.map((b) => `without ${command}: ${b}`));
    expect(broken).toEqual([]);

    // The README's notes on the list, per kind: `z…` and `hmget` for latches and barriers too.
    const needs = (kind: Kind) => commands.filter((c) => outcomes.get(c)!.failures[kind].length > 0);
    const failuresOf = (kind: Kind) => JSON.stringify(needs(kind).map((c) => [c, outcomes.get(c)!.failures[kind][0]]));
    for (const kind of ['latch', 'barrier'] as const) {
      expect(needs(kind).filter((c) => c.startsWith('z')), failuresOf(kind)).not.toEqual([]);
      expect(needs(kind), failuresOf(kind)).toEqual(expect.arrayContaining(['hmget', 'spublish', 'ssubscribe']));
    }
  }, 120_000);
});
