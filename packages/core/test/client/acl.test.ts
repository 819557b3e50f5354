import { LockClient, RedisCommandError, fencedWrite, readFenced } from '@holdfast/core';
import { readmeAcl, startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The minimal ACL documented in the README (read from it) is enough for every operation. */
describe('minimal ACL', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core'));
    // The same rights less one command a script runs.
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core').map((a) => (a === 'locks' ? 'noincr' : a)).filter((a) => a !== '+incr'));
    admin.disconnect();
  });
  afterAll(() => server.stop());

  it('acquires, waits, hands off, extends, inspects and force-releases', async () => {
    const a = server.client({ username: 'locks', password: 'secret' });
    const b = server.client({ username: 'locks', password: 'secret' });
    const errors: unknown[] = [];
    const la = new LockClient(a);
    const lb = new LockClient(b);
    la.on('error', (e) => errors.push(e));
    lb.on('error', (e) => errors.push(e));
    const lease = await la.lock('acl').acquire();
    const waiting = lb.lock('acl').acquire({ waitMs: 5_000 });
    await new Promise((r) => setTimeout(r, 50));
    await lease.extend(10_000);
    expect(await lb.lock('acl').isLocked()).toBe(true);
    await lease.release();
    const next = await waiting;
    expect(next.token).toBeGreaterThan(lease.token);
    expect(await fencedWrite(a, 'holdfast:doc', next.token, 'v')).toBe(true);
    expect(await readFenced(a, 'holdfast:doc')).toEqual({ token: next.token, value: 'v' });
    expect(await la.lock('acl').forceRelease()).toBe(true);
    expect(errors).toEqual([]);
    // Outside the prefix, the same user is refused.
    await expect(a.get('other:key')).rejects.toThrow(/NOPERM/);
    await la.close();
    await lb.close();
  });

  it('a missing permission is a RedisCommandError quoting the server, at once, not a timeout', async () => {
    const redis = server.client({ username: 'noincr', password: 'secret' });
    const locks = new LockClient(redis, { commandTimeoutMs: 20_000 });
    const started = performance.now();
    const error = await locks.lock('acl-noperm').acquire({ waitMs: 30_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisCommandError);
    // Redis 7.0 words it as a script error: the server's own text is quoted.
    expect((error as Error).message).toMatch(/NOPERM|can't run this command/);
    // Not retried until the wait ran out: an error reply is final.
    expect(performance.now() - started).toBeLessThan(15_000);
    await locks.close();
    redis.disconnect();
  });
});
