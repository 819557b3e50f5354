import { LockClient } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast } from './support.js';

describe('holdfast CLI: idempotency keys and flights', () => {
  let server: RedisServer;
  let locks: LockClient;
  let open!: () => void;
  let running: Promise<unknown>;
  const prefix = 'cliidem';
  beforeAll(async () => {
    server = await startRedis();
    locks = new LockClient(server.client(), { prefix, name: 'api' });
    await locks.idempotency('pay:v2', { ttlMs: 60_000 }).run('order:1', () => ({ charged: true }), { fingerprint: 'sha-1' });
    const gate = new Promise<void>((resolve) => (open = resolve));
    running = locks.idempotency('pay:v2').run('order:2', () => gate);
    await waitFor(async () => (await locks.idempotency('pay:v2').get('order:2'))?.state === 'running');
  }, 30_000);
  afterAll(async () => {
    open?.();
    await running;
    await locks?.close();
    await server?.stop();
  });

  it('ls: a stored result and a running call, named <name>:<request key>', async () => {
    const { code, stdout } = await holdfast(['ls', '--url', server.url, '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const states = JSON.parse(stdout) as LockState[];
    expect(states.map((s) => [s.name, s.kind, s.result])).toEqual([
      ['pay:v2:order:1', 'idempotency', 'done'],
      ['pay:v2:order:2', 'idempotency', 'running'],
    ]);
    const [done, run] = states;
    expect(done).toMatchObject({ foreign: false, holders: [], fingerprint: 'sha-1', token: expect.any(Number) });
    expect(done!.expiresInMs).toBeGreaterThan(0);
    expect(done!.expiresInMs).toBeLessThanOrEqual(60_000);
    expect(run!.holders).toHaveLength(1);
    expect(run!.holders[0]!.client).toMatch(/^api \(/);
    expect(run!.holders[0]!.token).toBe(run!.token);
    const table = await holdfast(['ls', '--url', server.url, '--prefix', prefix]);
    const lines = table.stdout.trim().split('\n');
    expect(lines[1]).toMatch(/^pay:v2:order:1\s+idempotency\s+done \(result stored\)\s+\d+\s+\d+(\.\d)?s\s+0$/);
    expect(lines[2]).toMatch(/^pay:v2:order:2\s+idempotency\s+api \(.+\)\s+1\s+\d+\s+\d+(\.\d)?s\s+0$/);
  });

  it('inspect: found by <name>:<request key> whatever colons the name has; release is refused', async () => {
    const done = await holdfast(['inspect', 'pay:v2:order:1', '--url', server.url, '--prefix', prefix]);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/^idempotency "pay:v2:order:1"\n {2}key {6}cliidem:\{\w+\}:idem:6:pay:v2:order:1\n {2}state {4}done\n {2}token {4}\d+\n {2}fingerprint {2}sha-1\n {2}expires {2}in \d+(\.\d)?s\n$/);
    const refused = await holdfast(['release', 'pay:v2:order:2', '--force', '--yes', '--url', server.url, '--prefix', prefix]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is an idempotency key');
    const missing = await holdfast(['inspect', 'pay:v2:order:3', '--url', server.url, '--prefix', prefix, '--kind', 'idempotency']);
    expect(missing.code).not.toBe(0);
  });
});
