import { LockClient } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast } from './support.js';

describe('holdfast CLI: latches and barriers', () => {
  let server: RedisServer;
  let locks: LockClient;
  let arrivals: Promise<unknown>[];
  const prefix = 'clisync';
  beforeAll(async () => {
    server = await startRedis();
    locks = new LockClient(server.client(), { prefix, name: 'stage' });
    const latch = locks.countDownLatch('import-42', { ttlMs: 60_000 });
    await latch.trySetCount(3);
    await latch.countDown();
    await locks.countDownLatch('done').trySetCount(1);
    await locks.countDownLatch('done').countDown();
    const barrier = locks.barrier('stage-2', { parties: 3 });
    arrivals = [barrier.arrive({ leaseMs: 30_000 }).catch(() => undefined), barrier.arrive({ leaseMs: 30_000 }).catch(() => undefined)];
    const admin = server.client();
    await waitFor(async () => (await admin.zcount(barrier.keys.parties, '-inf', '(inf')) === 2);
  }, 30_000);
  afterAll(async () => {
    await locks?.close();
    await Promise.all(arrivals ?? []);
    await server?.stop();
  });

  it('ls: a latch still counting and a barrier with parties waiting (an open latch is not listed)', async () => {
    const { code, stdout } = await holdfast(['ls', '--url', server.url, '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const states = JSON.parse(stdout) as LockState[];
    expect(states.map((s) => [s.name, s.kind])).toEqual([
      ['import-42', 'latch'],
      ['stage-2', 'barrier'],
    ]);
    const [latch, barrier] = states;
    expect(latch).toMatchObject({ count: 2, foreign: false, holders: [], waiters: [] });
    expect(latch!.expiresInMs).toBeGreaterThan(0);
    expect(latch!.expiresInMs).toBeLessThanOrEqual(60_000);
    expect(barrier).toMatchObject({ parties: 3, generation: 0, foreign: false, holders: [] });
    expect(barrier!.waiters).toHaveLength(2);
    expect(barrier!.waiters[0]!.client).toMatch(/^stage \(/);
    expect(barrier!.waiters[0]!.expiresInMs).toBeLessThanOrEqual(30_000);
    const table = await holdfast(['ls', '--url', server.url, '--prefix', prefix]);
    const lines = table.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^import-42\s+latch\s+count 2\s+\d+(\.\d)?s\s+0$/);
    expect(lines[2]).toMatch(/^stage-2\s+barrier\s+2 of 3 arrived, generation 0\s+2$/);
  });

  it('inspect: the count; the parties, generation and waiting parties; release is refused', async () => {
    const latch = await holdfast(['inspect', 'import-42', '--url', server.url, '--prefix', prefix]);
    expect(latch.code).toBe(0);
    expect(latch.stdout).toMatch(/^latch "import-42"\n {2}key {6}clisync:\{\w+\}:latch:import-42\n {2}count {4}2\n {2}expires  in \d+(\.\d)?s unless counted down or set again\n$/);
    const barrier = await holdfast(['inspect', 'stage-2', '--url', server.url, '--prefix', prefix, '--kind', 'barrier']);
    expect(barrier.code).toBe(0);
    expect(barrier.stdout).toContain('  parties  2 of 3 arrived\n  generation  0\n');
    expect(barrier.stdout).toMatch(/ {4}1 +stage \(.+\) +\d+(\.\d)?s +\w+/);
    const release = await holdfast(['release', 'stage-2', '--force', '--yes', '--url', server.url, '--prefix', prefix]);
    expect(release.code).toBe(2);
    expect(release.stderr).toBe('holdfast: `stage-2` is a barrier: nothing is held to release\n');
    const foreign = server.client();
    await foreign.set(locks.countDownLatch('x').keys.latch, 'not a latch');
    // A barrier whose parties key holds a sorted set without holdfast's mark.
    const odd = locks.barrier('x', { parties: 1 });
    expect(await odd.arrive()).toEqual({ generation: 0 });
    await foreign.zadd(odd.keys.parties, Date.now() + 60_000, 'not a party');
    const listed = JSON.parse((await holdfast(['ls', 'x', '--url', server.url, '--prefix', prefix, '--json'])).stdout) as LockState[];
    expect(listed).toEqual([
      expect.objectContaining({ name: 'x', kind: 'barrier', foreign: true, waiters: [] }),
      expect.objectContaining({ name: 'x', kind: 'latch', foreign: true }),
    ]);
    foreign.disconnect();
  });
});
