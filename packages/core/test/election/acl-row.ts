import { LockClient, RedisCommandError, type Leader } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { expect } from 'vitest';
import { REFUSED, type AclContext, type AclRow, type Outcome } from '../acl-table.js';

/**
 * Campaign, queue, give up, proclaim, hand over, read: every failure swallowed. Whatever it
 * leaves behind must be well-formed and carry a TTL (so it runs out by itself).
 */
async function workload(ctx: AclContext, user: string, tag: string): Promise<Outcome> {
  const out: Outcome = { failures: [], broken: [] };
  const name = `refused-${tag}`;
  const clients = [0, 1, 2].map(() => {
    const locks = new LockClient(ctx.server.client({ username: user, password: 'secret' }), { prefix: 'holdfast', evictionCheck: 'off', commandTimeoutMs: 500, retries: 0 });
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
  for (const key of await ctx.admin.keys(`holdfast:{*}:el?:${name}`)) {
    const pttl = await ctx.admin.pttl(key);
    // -2: the key ran out between KEYS and PTTL (a short term on a loaded machine), not a key without TTL.
    if (pttl === -1) out.broken.push(`${key} has no TTL`);
    if ((await ctx.admin.type(key)) === 'hash' && key.includes(':el:')) {
      const fields = Object.keys(await ctx.admin.hgetall(key));
      const owners = fields.filter((f) => !f.startsWith('@') && f !== '=');
      const tokens = fields.filter((f) => f.startsWith('@') && f !== '@c');
      if (owners.length !== 1 || tokens.length !== 1) out.broken.push(`${key}: ${fields.join(',')}`);
    }
  }
  return out;
}

export const electionAcl: AclRow = {
  kind: 'election',
  async works(ctx) {
    const [a, b] = [0, 1].map(() => new LockClient(ctx.server.client({ username: 'locks', password: 'secret' })));
    const errors: unknown[] = [];
    for (const c of [a!, b!]) c.on('error', (e) => errors.push(e));
    const seen: (Leader | null)[] = [];
    const stop = new AbortController();
    const observing = (async () => {
      for await (const leader of b!.election('acl').observe({ signal: stop.signal })) seen.push(leader);
    })();
    const term = await a!.election('acl').campaign({ value: 'a' });
    const next = b!.election('acl').campaign({ value: 'b' });
    const admin = ctx.server.client();
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
  },
  refused: {
    command: 'del',
    title: "a resignation Redis refuses rejects with the server's error and keeps the term, renewed",
    async check(ctx, user) {
      const locks = new LockClient(ctx.server.client({ username: user, password: 'secret' }));
      locks.on('error', () => undefined);
      const election = locks.election('acl-nodel', { termMs: 600 });
      const term = await election.campaign({ value: 'v' });
      const error = await term.resign().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisCommandError);
      expect(String((error as Error).message)).toMatch(REFUSED);
      // Still the leader, and still renewed past its first term.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(term.isLeader).toBe(true);
      expect(await election.leader()).toEqual({ value: 'v', epoch: term.epoch });
      await locks.close();
    },
  },
  sweep: {
    workload,
    // Everything runs out; then a user with every right is elected at once everywhere.
    async after(ctx, tags) {
      const all = new LockClient(ctx.server.client({ username: 'all', password: 'secret' }), { prefix: 'holdfast', evictionCheck: 'off' });
      await waitFor(async () => (await ctx.admin.keys('holdfast:{*}:el:refused-*')).length === 0, { timeoutMs: 10_000 });
      for (const tag of tags) {
        const term = await all.election(`refused-${tag}`).campaign({ value: 'clean', waitMs: 5_000 });
        await term.resign();
      }
      await all.close();
    },
  },
};
