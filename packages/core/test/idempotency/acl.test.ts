import { LockClient } from '@holdfast/core';
import { readmeAcl, startRedis, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Every command the claim record's script runs (claim.lua), each taken away in turn. */
const SCRIPT_COMMANDS = ['hmget', 'exists', 'hget', 'pttl', 'pexpire', 'incr', 'hset', 'del', 'spublish'];

/** Idempotency keys and flights through the README's minimal ACL, whole and less one command. */
describe('minimal ACL: idempotency and single-flight', () => {
  let server: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
    const acl = readmeAcl('core');
    expect(acl.filter((a) => SCRIPT_COMMANDS.includes(a.slice(1)))).toHaveLength(SCRIPT_COMMANDS.length);
    await admin.call('ACL', 'SETUSER', ...acl);
    for (const command of SCRIPT_COMMANDS) {
      await admin.call('ACL', 'SETUSER', ...acl.map((a) => (a === 'locks' ? `no${command}` : a)).filter((a) => a !== `+${command}`));
    }
  });
  afterAll(() => server.stop());

  /** Runs, replays, a failed run, a read, a forget and a flight as `user`: what failed. */
  async function workload(user: string, tag: string): Promise<string[]> {
    const locks = new LockClient(server.client({ username: user, password: 'secret' }), { prefix: 'holdfast', leaseMs: 2_000 });
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

  it('the documented ACL runs every operation', async () => {
    expect(await workload('locks', 'whole')).toEqual([]);
  });

  it('a command refused part-way leaves no record without a TTL and none half-written', async () => {
    for (const command of SCRIPT_COMMANDS) {
      const failures = await workload(`no${command}`, command);
      expect(failures.length, command).toBeGreaterThan(0);
      const keys = [...(await admin.keys(`holdfast:{*}:idem:*:acl-${command}:*`)), ...(await admin.keys(`holdfast:{*}:sf:fl-${command}`))];
      for (const key of keys) {
        expect(await admin.pttl(key), `${command}: ${key}`).toBeGreaterThan(0);
        const record = await admin.hgetall(key);
        expect(record, `${command}: ${key}`).toMatchObject({ i: '1', o: expect.any(String), f: expect.any(String), v: expect.any(String) });
        expect(['r', 'd', 'e'], `${command}: ${key}`).toContain(record.s);
        expect(Number(record.t), `${command}: ${key}`).toBeGreaterThan(0);
      }
    }
  });
});
