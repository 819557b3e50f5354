import { startRedisCluster, waitFor, type RedisClusterFixture } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast, scene, underPty, type Scene } from './support.js';

/** The same commands against a real 3-primary Redis Cluster: SCAN visits every primary. */
describe('holdfast CLI on a Redis Cluster', () => {
  let cluster: RedisClusterFixture;
  let held: Scene;
  const prefix = 'clc';
  const url = () => cluster.servers[0]!.url;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    const admin = cluster.client();
    held = await scene(() => cluster.client(), prefix, (key, length) => waitFor(async () => (await admin.llen(key)) === length));
    // Locks on every primary, so a SCAN of one node would miss some.
    for (let i = 0; i < 12; i++) held.leases.push(await held.clients[3]!.lock(`job:${i}`).acquire({ leaseMs: 60_000 }));
  }, 90_000);
  afterAll(async () => {
    await held?.close();
    await cluster?.stop();
  });

  it('ls --cluster lists every lock over all primaries, holders named', async () => {
    const { code, stdout } = await holdfast(['ls', '--cluster', '--url', url(), '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const states = JSON.parse(stdout) as LockState[];
    expect(states.map((s) => s.name)).toEqual(
      ['catalog', ...Array.from({ length: 12 }, (_, i) => `job:${i}`).sort(), 'orders', 'pool'].sort((a, b) => a.localeCompare(b)),
    );
    const orders = states.find((s) => s.name === 'orders')!;
    expect(orders.holders.map((h) => h.client)).toEqual([expect.stringMatching(/^billing \(/)]);
    expect(orders.waiters).toHaveLength(2);
    const slots = new Set(held.leases.map((lease) => held.clients[0]!.lock(lease.name).keys.slot));
    expect(slots.size).toBeGreaterThan(3);
  });

  it('ls on a terminal, inspect of a queued lock and a read-write lock, and exit codes on a Cluster', async () => {
    const table = await underPty(['ls', 'o*', '--cluster', '--url', url(), '--prefix', prefix]);
    expect(table.code).toBe(0);
    const lines = table.output.trim().split(/\r?\n/);
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+HOLDER/);
    expect(lines.slice(1)).toEqual([expect.stringMatching(/^orders\s+lock\s+billing \(.+\)\s+1\s+\d+\s+\d+(\.\d)?s\s+2$/)]);

    const orders = await holdfast(['inspect', 'orders', '--cluster', '--url', url(), '--prefix', prefix, '--json']);
    expect(orders.code).toBe(0);
    expect((JSON.parse(orders.stdout) as LockState).waiters.map((w) => w.client)).toEqual([
      expect.stringMatching(/^worker-1 \(/),
      expect.stringMatching(/^worker-2 \(/),
    ]);
    const catalog = await holdfast(['inspect', 'catalog', '--cluster', '--url', url(), '--prefix', prefix, '--json']);
    expect(catalog.code).toBe(0);
    const rw = JSON.parse(catalog.stdout) as LockState;
    expect([rw.kind, rw.holders.map((h) => h.side)]).toEqual(['rwlock', ['read', 'read']]);

    const none = await holdfast(['ls', '--cluster', '--url', url(), '--prefix', `${prefix}-empty`]);
    expect(none.code).toBe(3);
    const missing = await holdfast(['inspect', 'no-such-lock', '--cluster', '--url', url(), '--prefix', prefix]);
    expect(missing.code).toBe(3);
    const semaphore = await holdfast(['release', 'pool', '--force', '--yes', '--cluster', '--url', url(), '--prefix', prefix]);
    expect(semaphore.code).toBe(2);
    // A Cluster has database 0 only: another is refused by the server, not ignored.
    const db = await holdfast(['ls', '--cluster', '--url', `${url()}/1`, '--prefix', prefix]);
    expect(db.code).toBe(1);
    expect(db.stderr).toMatch(/^holdfast: Redis refused SELECT 1 \(the database of `--url`\): ERR SELECT is not allowed in cluster mode\n$/);
  });

  it('inspect, watch and release --force on a Cluster', async () => {
    const inspect = await holdfast(['inspect', 'pool', '--cluster', '--url', url(), '--prefix', prefix]);
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toContain('permits  2 of 3 in use');

    const watched = await underPty(['watch', '--cluster', '--url', url(), '--prefix', prefix, '--once']);
    expect(watched.code).toBe(0);
    expect(watched.output).toContain('job:11');
    expect(watched.output.endsWith('\x1b[?1049l')).toBe(true);

    const released = await holdfast(['release', 'orders', '--force', '--yes', '--cluster', '--url', url(), '--prefix', prefix]);
    expect(released.code).toBe(0);
    const next = await held.waiting[0]!;
    expect(next.token).toBeGreaterThan(held.leases[0]!.token);
  });
});
