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
