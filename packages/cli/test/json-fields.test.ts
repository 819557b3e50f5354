import { readFileSync } from 'node:fs';
import { LockClient, type Lease, type PermitLease } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast } from './support.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The field names of the README table that follows `heading` ("A holder, in `holders`:"). */
function documented(heading: string): string[] {
  const start = README.indexOf(heading);
  expect(start).toBeGreaterThan(0);
  const rows = README.slice(start).split('\n').slice(1);
  const table = rows.slice(rows.findIndex((line) => line.startsWith('|')));
  const body = table.slice(0, table.findIndex((line) => !line.startsWith('|'))).slice(2);
  return body.map((line) => /^\| `([^`]+)` \|/.exec(line)![1]!).sort();
}

/** The values the README's `field` row gives as its type (`"lock"`, `"rwlock"`, …), in the table after `heading`. */
function documentedValues(heading: string, field: string): string[] {
  const table = README.slice(README.indexOf(heading));
  const row = table.split('\n').find((line) => line.startsWith(`| \`${field}\` |`))!;
  return [...row.split('|')[2]!.matchAll(/`"([^"]+)"`/g)].map((m) => m[1]!).sort();
}

const keys = (objects: readonly object[]) => [...new Set(objects.flatMap((o) => Object.keys(o)))].sort();

/**
 * Every field `--json` prints is documented in the README, and every
 * documented field is printed: a mutex with a queue, a read-write lock with
 * readers and a queued writer, a semaphore with a holder and a waiter, an
 * election with a leader and a candidate waiting, a lock whose name is not
 * UTF-8, a latch counting, a barrier with a party waiting, an idempotency
 * key's stored result and a running flight give every optional field and
 * every kind at least once.
 */
describe('holdfast --json fields', () => {
  let server: RedisServer;
  const clients: LockClient[] = [];
  const waiting: Promise<Lease | PermitLease>[] = [];
  let held: Lease;
  const prefix = 'fields';
  let land!: () => void;
  const landed = new Promise<void>((resolve) => (land = resolve));

  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    const queued = (key: string, length: number) => waitFor(async () => (await admin.llen(key)) === length);
    const [a, b] = [0, 1].map(() => new LockClient(server.client(), { prefix, name: 'fields' }));
    clients.push(a!, b!);
    for (const client of clients) client.on('error', () => undefined);
    // Each wait's rejection (close(), or a set-up step below failing) is expected: taken as soon as the wait is made.
    const wait = (pending: Promise<unknown>) => {
      pending.catch(() => undefined);
      waiting.push(pending as never);
    };
    held = await a!.lock('mutex').acquire({ leaseMs: 60_000 });
    wait(b!.lock('mutex').acquire({ waitMs: 60_000 }));
    await queued(a!.lock('mutex').keys.queue, 1);
    await a!.readWriteLock('shelf').read.acquire({ leaseMs: 60_000 });
    wait(b!.readWriteLock('shelf').write.acquire({ waitMs: 60_000 }));
    await queued(a!.readWriteLock('shelf').read.keys.queue, 1);
    await a!.semaphore('pool', { permits: 2 }).acquire({ permits: 2, leaseMs: 60_000 });
    wait(b!.semaphore('pool', { permits: 2 }).acquire({ waitMs: 60_000 }));
    await queued(a!.semaphore('pool', { permits: 2 }).keys.queue, 1);
    await a!.election('vote', { termMs: 60_000 }).campaign({ value: 'a' });
    wait(b!.election('vote', { termMs: 60_000 }).campaign({ value: 'b' }));
    await queued(a!.election('vote').keys.queue, 1);
    await a!.countDownLatch('latch').trySetCount(2);
    wait(a!.barrier('meet', { parties: 2 }).arrive({ leaseMs: 60_000 }));
    await waitFor(async () => (await admin.zcount(a!.barrier('meet', { parties: 2 }).keys.parties, '-inf', '(inf')) === 1);
    await a!.idempotency('ik', { ttlMs: 60_000 }).run('r', () => 1, { fingerprint: 'f' });
    const flying = a!.singleFlight('flight', () => landed, { leaseMs: 60_000 });
    await waitFor(async () => (await admin.keys(`${prefix}:{*}:sf:flight`)).length === 1);
    wait(flying);
    const raw = Buffer.concat([Buffer.from(`${prefix}:{0}:l:`), Buffer.from([0x6e, 0xff])]);
    await admin.hset(raw, 'zzzzzzzz-1', '1', '@r', '9');
    await admin.pexpire(raw, 600_000);
  }, 30_000);
  afterAll(async () => {
    land();
    await Promise.all(clients.map((client) => client.close()));
    await server?.stop();
  });

  it('ls --json prints exactly the fields the README documents', async () => {
    const { code, stdout } = await holdfast(['ls', '--url', server.url, '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const states = JSON.parse(stdout) as LockState[];
    expect(states.map((s) => s.name)).toEqual(['flight', 'ik:r', 'latch', 'meet', 'mutex', 'n\ufffd', 'pool', 'shelf', 'vote']);
    expect([...new Set(states.map((s) => s.kind))].sort()).toEqual(documentedValues('A lock state:', 'kind'));
    expect(keys(states)).toEqual(documented('A lock state:'));
    expect(keys(states.flatMap((s) => s.holders))).toEqual(documented('A holder, in `holders`:'));
    expect(keys(states.flatMap((s) => s.waiters))).toEqual(documented('A waiter, in `waiters`:'));
  });

  it('remainingMs is the lease left, within the lease acquired; a waiter names its request', async () => {
    const { code, stdout } = await holdfast(['inspect', 'mutex', '--url', server.url, '--prefix', prefix, '--json']);
    expect(code).toBe(0);
    const state = JSON.parse(stdout) as LockState;
    expect(state.holders).toEqual([
      { owner: expect.any(String), client: expect.stringMatching(/^fields \(/), holds: 1, token: held.token, remainingMs: expect.any(Number), handoffUnconfirmed: false },
    ]);
    expect(state.holders[0]!.remainingMs).toBeGreaterThan(0);
    expect(state.holders[0]!.remainingMs).toBeLessThanOrEqual(60_000);
    const queue = await server.client().hgetall(clients[0]!.lock('mutex').keys.waiters);
    expect(state.waiters.map((w) => w.requestId)).toEqual(Object.keys(queue));
    expect(state.waiters[0]).toEqual({
      requestId: expect.any(String), owner: expect.any(String), client: expect.stringMatching(/^fields \(/), expiresInMs: expect.any(Number),
    });
  });
});
