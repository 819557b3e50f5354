import { LockClient, type Term } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast } from './support.js';

/** `ls` and `inspect` on an election: its leader, value, epoch and waiting candidates. */
describe('holdfast CLI on an election', () => {
  let server: RedisServer;
  const prefix = 'cli-el';
  const clients: LockClient[] = [];
  let term: Term;
  const candidates: Promise<Term>[] = [];
  const stop = new AbortController();

  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    const make = (name: string) => {
      const c = new LockClient(server.client(), { prefix, name });
      clients.push(c);
      return c;
    };
    const [leader, w1, w2] = [make('scheduler-a'), make('scheduler-b'), make('scheduler-c')];
    term = await leader.election('nightly', { termMs: 60_000 }).campaign({ value: 'web-3:8080\u001b[2J' });
    for (const [i, c] of [w1, w2].entries()) {
      const campaign = c.election('nightly').campaign({ value: `w${i}`, signal: stop.signal });
      campaign.catch(() => undefined);
      candidates.push(campaign);
      await waitFor(async () => (await admin.llen(leader.election('nightly').keys.queue)) === i + 1);
    }
    admin.disconnect();
  }, 30_000);
  afterAll(async () => {
    stop.abort();
    await Promise.allSettled(candidates);
    await term?.resign();
    await Promise.all(clients.map((c) => c.close()));
    await server?.stop();
  });

  it('ls --json: the leader with its value and epoch, the candidates in order', async () => {
    const { code, stdout } = await holdfast(['ls', '--url', server.url, '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const [state] = JSON.parse(stdout) as LockState[];
    expect(state).toMatchObject({ name: 'nightly', kind: 'election', foreign: false });
    expect(state!.holders).toEqual([expect.objectContaining({ value: 'web-3:8080\u001b[2J', token: term.epoch, handoffUnconfirmed: false })]);
    expect(state!.holders[0]!.client).toMatch(/^scheduler-a /);
    expect(state!.waiters.map((w) => w.client.split(' ')[0])).toEqual(['scheduler-b', 'scheduler-c']);
  });

  it('ls and inspect as text: the value escaped, the epoch, the candidates', async () => {
    const ls = await holdfast(['ls', '--url', server.url, '--prefix', prefix]);
    expect(ls.code).toBe(0);
    const row = ls.stdout.split('\n').find((l) => l.startsWith('nightly'))!;
    expect(row).toMatch(new RegExp(`^nightly\\s+election\\s+scheduler-a .*= "web-3:8080\\\\x1b\\[2J"\\s+1\\s+${term.epoch}\\s+\\d+(\\.\\d)?s\\s+2$`));
    const inspect = await holdfast(['inspect', 'nightly', '--url', server.url, '--prefix', prefix, '--kind', 'election']);
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).not.toContain('\u001b');
    expect(inspect.stdout).toMatch(new RegExp(`leader +scheduler-a .*value "web-3:8080\\\\x1b\\[2J" +epoch ${term.epoch}`));
    expect(inspect.stdout).toMatch(/candidates 2\n/);
    const release = await holdfast(['release', 'nightly', '--force', '--yes', '--url', server.url, '--prefix', prefix]);
    expect(release.code).not.toBe(0);
    expect(release.stderr).toContain('is an election');
  });
});
