import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const worker = fileURLToPath(new URL('./cron-worker.mjs', import.meta.url));

/**
 * Three real processes scheduling one node-cron task every second through `runCoordinator()`, one of
 * them paused (SIGSTOP, SIGCONT) and another killed (SIGKILL) meanwhile: every firing ran exactly once
 * across the fleet. Faults are sent just after a firing was recorded, so no instance is stopped between
 * winning a firing and running it (that would be a firing lost by the test, not by the coordinator).
 */
describe('runCoordinator with node-cron in three processes', () => {
  let server: RedisServer;
  let admin: Redis;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    admin.disconnect();
    await server.stop();
  });

  async function start(name: string): Promise<ChildProcess> {
    const child = spawn(process.execPath, [worker, String(server.port), 'cron', 'fired', name], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const [line] = (await once(child.stdout!, 'data')) as [Buffer];
    expect(line.toString()).toContain('ready');
    return child;
  }

  /** Resolves as soon as one more firing than `seen` is recorded. */
  async function nextFiring(seen: number): Promise<number> {
    let count = seen;
    await waitFor(async () => (count = await admin.llen('fired')) > seen, { timeoutMs: 10_000, intervalMs: 10 });
    return count;
  }

  it('runs every firing exactly once while instances pause and die', async () => {
    const [a, b, c] = await Promise.all([start('a'), start('b'), start('c')]);
    let seen = await nextFiring(0);
    seen = await nextFiring(seen);
    b.kill('SIGSTOP');
    for (let i = 0; i < 3; i++) seen = await nextFiring(seen);
    b.kill('SIGCONT');
    seen = await nextFiring(seen);
    c.kill('SIGKILL');
    while (seen < 10) seen = await nextFiring(seen);
    for (const child of [a, b]) child.kill('SIGTERM');
    await Promise.all([a, b].map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));

    const entries = (await admin.lrange('fired', 0, -1)).map((entry) => entry.split(' ') as [string, string]);
    const firings = entries.map(([at]) => Date.parse(at)).sort((x, y) => x - y);
    // Never twice: no firing recorded by two instances.
    expect(new Set(firings).size).toBe(firings.length);
    // Never skipped: every second from the first recorded firing to the last.
    expect(firings.length).toBeGreaterThanOrEqual(10);
    expect((firings.at(-1)! - firings[0]!) / 1000 + 1).toBe(firings.length);
    // The fleet shared the work, the survivors going on after the pause and the kill.
    const by = new Set(entries.map(([, name]) => name));
    expect(by.size).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
