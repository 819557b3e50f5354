import { LockClient, RedisCommandError, type Leader } from '@holdfast/core';
import { readmeAcl, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The minimal ACL documented in the README (read from it) covers every election operation. */
describe('minimal ACL: elections', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core'));
    // The same rights less DEL, which a resignation runs.
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core').map((a) => (a === 'locks' ? 'nodel' : a)).filter((a) => a !== '+del'));
    admin.disconnect();
  });
  afterAll(() => server.stop());

  it('campaigns, hands over, proclaims, observes and resigns', async () => {
    const [a, b] = [0, 1].map(() => new LockClient(server.client({ username: 'locks', password: 'secret' })));
    const errors: unknown[] = [];
    for (const c of [a!, b!]) c.on('error', (e) => errors.push(e));
    const seen: (Leader | null)[] = [];
    const stop = new AbortController();
    const observing = (async () => {
      for await (const leader of b!.election('acl').observe({ signal: stop.signal })) seen.push(leader);
    })();
    const term = await a!.election('acl').campaign({ value: 'a' });
    const next = b!.election('acl').campaign({ value: 'b' });
    const admin = server.client();
    await waitFor(async () => (await admin.llen(a!.election('acl').keys.queue)) === 1);
    admin.disconnect();
    await term.proclaim('a2');
    await term.resign();
    const second = await next;
    expect(second.epoch).toBeGreaterThan(term.epoch);
    await second.resign();
    await waitFor(() => seen.at(-1) === null && seen.length > 1);
    stop.abort();
    await observing;
    expect(errors).toEqual([]);
    await a!.close();
    await b!.close();
  });

  it("a resignation Redis refuses rejects with the server's error and keeps the term, renewed", async () => {
    const locks = new LockClient(server.client({ username: 'nodel', password: 'secret' }));
    locks.on('error', () => undefined);
    const election = locks.election('acl-nodel', { termMs: 600 });
    const term = await election.campaign({ value: 'v' });
    const error = await term.resign().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisCommandError);
    expect(String((error as Error).message)).toMatch(/can't run this command|NOPERM/);
    // Still the leader, and still renewed past its first term.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(term.isLeader).toBe(true);
    expect(await election.leader()).toEqual({ value: 'v', epoch: term.epoch });
    await locks.close();
  });
});

/**
 * The README's ACL, one command less at a time: a refused command stops a
 * script with the writes before it applied. Whatever an election workload run
 * by such a user leaves behind must be well-formed, must carry a TTL (so it
 * runs out by itself), and must not keep a user with every right from being
 * elected once it has run out.
 */
describe('a command the ACL refuses part-way leaves every election consistent', () => {
  let server: RedisServer;
  const acl = readmeAcl('core');
  const commands = acl.filter((a) => a.startsWith('+')).map((a) => a.slice(1));
  const rules = acl.slice(1).filter((a) => !a.startsWith('+'));
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', 'all', ...rules, ...commands.map((c) => `+${c}`));
    for (const command of commands) {
      await admin.call('ACL', 'SETUSER', `no-${command}`, ...rules, ...commands.filter((c) => c !== command).map((c) => `+${c}`));
    }
    admin.disconnect();
  });
  afterAll(() => server.stop());

  /** Campaign, queue, give up, proclaim, hand over, read: every failure swallowed. */
  async function workload(user: string, name: string): Promise<void> {
    const clients = [0, 1, 2].map(() => {
      const locks = new LockClient(server.client({ username: user, password: 'secret' }), { prefix: 'holdfast', evictionCheck: 'off', commandTimeoutMs: 500, retries: 0 });
      locks.on('error', () => undefined);
      return locks;
    });
    const [a, b, c] = clients.map((locks) => locks.election(name, { termMs: 300 }));
    const ignore = () => undefined;
    const term = await a!.campaign({ value: 'a', waitMs: 500 }).catch(ignore);
    const next = b!.campaign({ value: 'b', waitMs: 1_000 }).catch(ignore);
    await c!.campaign({ value: 'c', waitMs: 100 }).catch(ignore);
    await term?.proclaim('a2').catch(ignore);
    await a!.leader().catch(ignore);
    await term?.resign().catch(ignore);
    const second = await next;
    await second?.resign().catch(ignore);
    await Promise.all(clients.map((locks) => locks.close()));
  }

  it('for every command of the list', async () => {
    const admin = server.client();
    await Promise.all(commands.map((command) => workload(`no-${command}`, `refused-${command}`)));
    const broken: string[] = [];
    for (const command of commands) {
      for (const key of await admin.keys(`holdfast:{*}:el?:refused-${command}`)) {
        const pttl = await admin.pttl(key);
        if (pttl < 0) broken.push(`${key} has no TTL (without ${command})`);
        if ((await admin.type(key)) === 'hash' && key.includes(':el:')) {
          const fields = Object.keys(await admin.hgetall(key));
          const owners = fields.filter((f) => !f.startsWith('@') && f !== '=');
          const tokens = fields.filter((f) => f.startsWith('@') && f !== '@c');
          if (owners.length !== 1 || tokens.length !== 1) broken.push(`${key}: ${fields.join(',')} (without ${command})`);
        }
      }
    }
    expect(broken).toEqual([]);
    // Everything runs out; then a user with every right is elected at once everywhere.
    const all = new LockClient(server.client({ username: 'all', password: 'secret' }), { prefix: 'holdfast', evictionCheck: 'off' });
    await waitFor(async () => (await admin.keys('holdfast:{*}:el:refused-*')).length === 0, { timeoutMs: 10_000 });
    for (const command of commands) {
      const term = await all.election(`refused-${command}`).campaign({ value: 'clean', waitMs: 5_000 });
      await term.resign();
    }
    await all.close();
    admin.disconnect();
  });
});
