import { LockClient } from '@holdfast/core';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockState } from '../src/index.js';
import { holdfast } from './support.js';

/**
 * A connection option the server refuses (a database it does not have, a
 * password it does not want, wrong credentials) fails the command with the
 * server's own message, on one line: never a listing of another database, or a
 * warning and a listing.
 */
describe('holdfast CLI: connection options the server refuses', () => {
  let server: RedisServer;
  const clients: LockClient[] = [];
  const prefix = 'opts';
  const url = (path = '') => `${server.url}${path}`;

  beforeAll(async () => {
    server = await startRedis();
    // One lock in database 0, another in database 3.
    const db3 = server.client();
    await db3.select(3);
    for (const [redis, name] of [
      [server.client(), 'in-db-0'],
      [db3, 'in-db-3'],
    ] as const) {
      const client = new LockClient(redis, { prefix });
      clients.push(client);
      await client.lock(name).acquire({ leaseMs: 60_000 });
    }
    // A user who may read and subscribe; the default user may not subscribe, so a
    // connection that skipped AUTH (watch's subscriber) would be refused.
    const admin = server.client();
    await admin.acl('SETUSER', 'watcher', 'on', '>sesame', '~*', '&*', '+@all');
    await admin.acl('SETUSER', 'default', 'resetchannels');
  }, 30_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await server?.stop();
  });

  it('a database out of range: exit 1 with the server message, nothing listed', async () => {
    const { code, stdout, stderr } = await holdfast(['ls', '--url', url('/99'), '--prefix', prefix]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe('holdfast: Redis refused SELECT 99 (the database of `--url`): ERR DB index is out of range\n');
    for (const command of [['inspect', 'in-db-0'], ['watch', '--once']]) {
      const other = await holdfast([...command, '--url', url('/99'), '--prefix', prefix]);
      expect([other.code, other.stdout, other.stderr]).toEqual([1, '', stderr]);
    }
  });

  it('the database of the URL is the one listed', async () => {
    const db3 = await holdfast(['ls', '--url', url('/3'), '--prefix', prefix, '--json']);
    expect(db3.code).toBe(0);
    expect((JSON.parse(db3.stdout) as LockState[]).map((s) => s.name)).toEqual(['in-db-3']);
    const db0 = await holdfast(['ls', '--url', url('/0'), '--prefix', prefix, '--json']);
    expect((JSON.parse(db0.stdout) as LockState[]).map((s) => s.name)).toEqual(['in-db-0']);
  });

  it('a password the server does not want: exit 1 with the server message, one line', async () => {
    const { code, stdout, stderr } = await holdfast(['ls', '--url', url(), '--prefix', prefix, '--password', 'unneeded']);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^holdfast: Redis refused AUTH: ERR AUTH <password> called without any password configured for the default user\.[^\n]*\n$/);
    // The same from the environment.
    const env = await holdfast(['ls', '--url', url(), '--prefix', prefix], { REDIS_PASSWORD: 'unneeded' });
    expect([env.code, env.stderr]).toEqual([1, stderr]);
  });

  it('wrong credentials: exit 5 with the server message; the right ones reach every connection, watch\'s subscriber too', async () => {
    const wrong = await holdfast(['ls', '--url', url(), '--prefix', prefix, '--user', 'watcher', '--password', 'wrong']);
    expect(wrong.code).toBe(5);
    expect(wrong.stderr).toMatch(/^holdfast: Access denied by Redis: WRONGPASS [^\n]*\n$/);
    const inUrl = await holdfast(['ls', '--url', url('/3').replace('redis://', 'redis://watcher:wrong@'), '--prefix', prefix]);
    expect([inUrl.code, inUrl.stderr]).toEqual([5, wrong.stderr]);

    const right = ['--url', url('/3').replace('redis://', 'redis://watcher:sesame@'), '--prefix', prefix];
    const watched = await holdfast(['watch', '--once', ...right]);
    expect(watched.stderr).toBe('');
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/^in-db-3 +lock /m);
    // Without credentials the subscriber is refused: the user above is what made it work.
    const anonymous = await holdfast(['watch', '--once', '--url', url('/3'), '--prefix', prefix]);
    expect(anonymous.code).toBe(5);
    expect(anonymous.stderr).toMatch(/^holdfast: Access denied by Redis: NOPERM [^\n]*\n$/);
  });
});
