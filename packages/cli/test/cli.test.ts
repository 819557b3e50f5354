import { hostname } from 'node:os';
import { lockKeys } from '@holdfast/core/keys';
import { closedPort, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast, scene, underPty, type Scene } from './support.js';

const ENTER = '\x1b[?1049h';
const LEAVE = '\x1b[?1049l';

describe('holdfast CLI on a standalone server', () => {
  let server: RedisServer;
  let held: Scene;
  const prefix = 'cli';
  const url = () => server.url;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    held = await scene(() => server.client(), prefix, (key, length) => waitFor(async () => (await admin.llen(key)) === length));
  }, 30_000);
  afterAll(async () => {
    await held?.close();
    await server?.stop();
  });

  it('ls --json: every lock, read-write lock and semaphore, holders named, waiters counted', async () => {
    const { code, stdout } = await holdfast(['ls', '--url', url(), '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const states = JSON.parse(stdout) as LockState[];
    expect(states.map((s) => [s.name, s.kind])).toEqual([
      ['catalog', 'rwlock'],
      ['orders', 'lock'],
      ['pool', 'semaphore'],
    ]);
    const [catalog, orders, pool] = states;
    const where = `${hostname()}:${process.pid}`;
    expect(orders!.holders).toEqual([
      expect.objectContaining({ client: `billing (${where})`, holds: 1, token: held.leases[0]!.token, handoffUnconfirmed: false }),
    ]);
    expect(orders!.holders[0]!.remainingMs).toBeGreaterThan(0);
    expect(orders!.holders[0]!.remainingMs).toBeLessThanOrEqual(60_000);
    expect(orders!.waiters.map((w) => w.client)).toEqual([`worker-1 (${where})`, `worker-2 (${where})`]);
    // The client without a name shows as host and pid.
    expect(catalog!.holders.map((h) => [h.client, h.side]).sort()).toEqual([
      [where, 'read'],
      [`worker-1 (${where})`, 'read'],
    ]);
    expect(pool!.permits).toBe(3);
    expect(pool!.holders).toEqual([expect.objectContaining({ client: `billing (${where})`, permits: 2 })]);
    expect(pool!.waiters).toEqual([expect.objectContaining({ client: `worker-2 (${where})`, permits: 2 })]);
  });

  it('ls on a terminal: a table, one row per holder; a pattern narrows it', async () => {
    const { code, output } = await underPty(['ls', '--url', url(), '--prefix', prefix]);
    expect(code).toBe(0);
    const lines = output.trim().split(/\r?\n/);
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+HOLDER\s+HOLDS\s+PERMITS\s+TOKEN\s+LEASE\s+WAITERS$/);
    expect(lines).toHaveLength(5);
    expect(lines.find((l) => l.startsWith('orders'))).toMatch(/^orders\s+lock\s+billing \(.+\)\s+1\s+\d+\s+\d+(\.\d)?s\s+2$/);
    expect(lines.filter((l) => l.startsWith('catalog'))).toHaveLength(2);
    expect(lines.find((l) => l.startsWith('pool'))).toMatch(/^pool\s+semaphore\s+billing \(.+\)\s+1\s+2\/3\s+\d+\s+\S+\s+1$/);
    const narrowed = await holdfast(['ls', 'ord*', '--url', url(), '--prefix', prefix]);
    expect(narrowed.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['orders']);
  });

  it('inspect: one lock in full, its queue in order', async () => {
    const { code, stdout } = await holdfast(['inspect', 'orders', '--url', url(), '--prefix', prefix]);
    expect(code).toBe(0);
    expect(stdout).toContain('lock "orders"');
    expect(stdout).toContain(`key      ${lockKeys(prefix, 'orders').lock}`);
    expect(stdout).toMatch(/holders {2}1\n/);
    const queue = stdout.slice(stdout.indexOf('waiters  2'));
    expect(queue.indexOf('worker-1')).toBeGreaterThan(0);
    expect(queue.indexOf('worker-1')).toBeLessThan(queue.indexOf('worker-2'));
    const json = await holdfast(['inspect', 'pool', '--url', url(), '--prefix', prefix, '--json']);
    expect((JSON.parse(json.stdout) as LockState).waiters[0]).toMatchObject({ permits: 2 });
  });

  it('exit codes and messages: unreachable URL, bad URL, wrong password, nothing held, no such lock, not a lock, usage', async () => {
    const unreachable = await holdfast(['ls', '--url', `redis://127.0.0.1:${await closedPort()}`]);
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toMatch(/^holdfast: Cannot reach Redis: connect ECONNREFUSED/);

    const badUrl = await holdfast(['ls', '--url', 'http://example']);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toBe('holdfast: Expected `--url` to be a redis:// or rediss:// URL, got `http://example`\n');

    const nothing = await holdfast(['ls', '--url', url(), '--prefix', 'empty']);
    expect(nothing.code).toBe(3);
    expect(nothing.stderr).toBe('holdfast: Nothing held under prefix `empty`\n');

    const missing = await holdfast(['inspect', 'nope', '--url', url(), '--prefix', prefix]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toBe('holdfast: No lock, read-write lock, semaphore, election, latch, barrier, idempotency key or flight named `nope` is held under prefix `cli`\n');

    await server.client().set(lockKeys(prefix, 'junk').lock, 'not a lock');
    const foreign = await holdfast(['inspect', 'junk', '--url', url(), '--prefix', prefix]);
    expect(foreign.code).toBe(7);
    expect(foreign.stderr).toBe('holdfast: `junk` is not a lock: its key holds data holdfast did not write\n');
    const foreignRelease = await holdfast(['release', 'junk', '--force', '--yes', '--url', url(), '--prefix', prefix]);
    expect(foreignRelease.code).toBe(7);
    expect(await server.client().get(lockKeys(prefix, 'junk').lock)).toBe('not a lock');

    const usage = await holdfast(['release', 'orders', '--url', url()]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe('holdfast: `holdfast release` frees a lock whoever holds it: say so with `--force`\n');
    expect((await holdfast(['frobnicate'])).code).toBe(2);
  });

  it('exit code 5 for a wrong password, an unknown ACL user, and a user the ACL does not let read', async () => {
    const admin = server.client();
    await admin.acl('SETUSER', 'ops', 'on', '>secret', '~*', '+@all');
    await admin.acl('SETUSER', 'limited', 'on', '>secret', '~*', '+ping', '+hello', '+auth');
    const wrong = await holdfast(['ls', '--url', url(), '--user', 'ops', '--password', 'wrong']);
    expect(wrong.code).toBe(5);
    expect(wrong.stderr).toMatch(/^holdfast: Access denied by Redis: WRONGPASS/);
    const ghost = await holdfast(['ls', '--url', url(), '--user', 'ghost', '--password', 'secret']);
    expect(ghost.code).toBe(5);
    const limited = await holdfast(['ls', '--url', url(), '--user', 'limited', '--password', 'secret']);
    expect(limited.code).toBe(5);
    expect(limited.stderr).toMatch(/^holdfast: Access denied by Redis: NOPERM/);
    // The right credentials, from the URL.
    const right = await holdfast(['ls', '--url', url().replace('redis://', 'redis://ops:secret@'), '--prefix', prefix]);
    expect(right.code).toBe(0);
  });

  it('release --force asks on a terminal, refuses without one, and wakes the next waiter', async () => {
    const noTerminal = await holdfast(['release', 'orders', '--force', '--url', url(), '--prefix', prefix]);
    expect(noTerminal.code).toBe(6);
    expect(noTerminal.stderr).toBe('holdfast: No terminal to confirm on: pass `--yes` to force-release from a script\n');

    const declined = await underPty(['release', 'orders', '--force', '--url', url(), '--prefix', prefix], {
      answerAfter: ['[y/N]', 'n\r'],
    });
    expect(declined.code).toBe(6);
    expect(declined.output).toContain('Force-release lock `orders` held by billing (');
    expect(held.leases[0]!.isHeld).toBe(true);

    const accepted = await underPty(['release', 'orders', '--force', '--url', url(), '--prefix', prefix], {
      answerAfter: ['[y/N]', 'y\r'],
    });
    expect(accepted.code).toBe(0);
    expect(accepted.output).toContain('Released lock `orders`');
    // The head of the queue is woken and takes the lock.
    const next = await held.waiting[0]!;
    expect(next.token).toBeGreaterThan(held.leases[0]!.token);
    const after = JSON.parse((await holdfast(['inspect', 'orders', '--url', url(), '--prefix', prefix, '--json'])).stdout) as LockState;
    expect(after.holders.map((h) => h.client)).toEqual([expect.stringMatching(/^worker-1 /)]);
    expect(after.waiters.map((w) => w.client)).toEqual([expect.stringMatching(/^worker-2 /)]);

    // A semaphore is not force-released.
    const semaphore = await holdfast(['release', 'pool', '--force', '--yes', '--url', url(), '--prefix', prefix]);
    expect(semaphore.code).toBe(2);
  });

  it('watch on a terminal: the alternate screen, restored on SIGINT', async () => {
    const { code, output } = await underPty(['watch', '--url', url(), '--prefix', prefix, '--interval', '100'], {
      interruptAfter: 'WAITERS',
    });
    expect(code).toBe(0);
    expect(output.startsWith(ENTER)).toBe(true);
    expect(output.endsWith(LEAVE)).toBe(true);
    expect(output).toMatch(/holdfast watch {2}prefix cli {2}\d+ held {2}hand-offs\/s \d+\.\d {2}hand-offs since start 0 {2}lost since start 0/);
    expect(output).toContain('catalog');
  });

  it('watch --iterations without a terminal: that many frames, no escape sequences', async () => {
    const { code, stdout } = await holdfast(['watch', '--url', url(), '--prefix', prefix, '--interval', '50', '--iterations', '3']);
    expect(code).toBe(0);
    expect(stdout.match(/^holdfast watch/gm)).toHaveLength(3);
    expect(stdout).not.toContain('\x1b');
  });
});
