import { LockClient } from '@holdfast/core';
import { expect } from 'vitest';
import type { AclContext, AclRow, Outcome } from '../acl-table.js';

/** Every command the claim record's script runs (claim*.lua), each taken away in turn. */
const SCRIPT_COMMANDS = ['hmget', 'exists', 'hget', 'pttl', 'pexpire', 'incr', 'hset', 'del', 'spublish'];

/** Runs, replays, a failed run, a read, a forget and a flight as `user`: what failed. */
async function operations(ctx: AclContext, user: string, tag: string): Promise<string[]> {
  const locks = new LockClient(ctx.server.client({ username: user, password: 'secret' }), { prefix: 'holdfast', leaseMs: 2_000 });
  locks.on('error', () => undefined);
  const failures: string[] = [];
  const declined = new Error('declined');
  const attempt = async (what: string, call: () => Promise<unknown>) => {
    await call().catch((error: unknown) => {
      if (error !== declined) failures.push(what);
    });
  };
  const idem = locks.idempotency(`acl-${tag}`, { ttlMs: 60_000 });
  await attempt('run', () => idem.run('a', () => 1, { fingerprint: 'f' }));
  await attempt('replay', () => idem.run('a', () => 2, { fingerprint: 'f' }));
  await attempt('failed run', () =>
    idem.run('b', () => {
      throw declined;
    }),
  );
  await attempt('get', () => idem.get('a'));
  await attempt('forget', () => idem.forget('a'));
  await attempt('flight', () => locks.singleFlight(`fl-${tag}`, () => 3));
  await locks.close();
  return failures;
}

/** A command refused part-way leaves no record without a TTL and none half-written. */
async function workload(ctx: AclContext, user: string, tag: string): Promise<Outcome> {
  const failures = await operations(ctx, user, tag);
  const { admin } = ctx;
  const keys = [...(await admin.keys(`holdfast:{*}:idem:*:acl-${tag}:*`)), ...(await admin.keys(`holdfast:{*}:sf:fl-${tag}`))];
  for (const key of keys) {
    expect(await admin.pttl(key), `${tag}: ${key}`).toBeGreaterThan(0);
    const record = await admin.hgetall(key);
    expect(record, `${tag}: ${key}`).toMatchObject({ i: '1', o: expect.any(String), f: expect.any(String), v: expect.any(String) });
    expect(['r', 'd', 'e'], `${tag}: ${key}`).toContain(record.s);
    expect(Number(record.t), `${tag}: ${key}`).toBeGreaterThan(0);
  }
  return { failures, broken: [] };
}

export const idempotencyAcl: AclRow = {
  kind: 'idempotency',
  async works(ctx) {
    expect(await operations(ctx, 'locks', 'whole')).toEqual([]);
  },
  sweep: {
    commands: (all) => {
      // The README's list has every command the script runs.
      expect(all.filter((c) => SCRIPT_COMMANDS.includes(c))).toHaveLength(SCRIPT_COMMANDS.length);
      return SCRIPT_COMMANDS;
    },
    oneAtATime: true,
    workload,
    // Without any of them, some operation fails; but SPUBLISH, which a script runs by pcall (a
    // refused publish is ignored: a spinning client's user needs no pub/sub).
    needs: (failing, failuresOf) => expect(failing, failuresOf(failing)).toEqual(SCRIPT_COMMANDS.filter((c) => c !== 'spublish')),
  },
};
