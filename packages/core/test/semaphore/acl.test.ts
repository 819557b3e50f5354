import { KeyConflictError, LockClient, RedisCommandError } from '@holdfast/core';
import { readmeAcl, startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The minimal ACL documented in the README (read from it) covers every semaphore operation. */
describe('minimal ACL: semaphores', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core'));
    // The same rights less one command the semaphore scripts run.
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core').map((a) => (a === 'locks' ? 'nozset' : a)).filter((a) => a !== '+zrangebyscore'));
    admin.disconnect();
  });
  afterAll(() => server.stop());

  it('acquires, waits, hands off, extends, counts, resizes, releases and force-releases', async () => {
    const la = new LockClient(server.client({ username: 'locks', password: 'secret' }));
    const lb = new LockClient(server.client({ username: 'locks', password: 'secret' }));
    const errors: unknown[] = [];
    la.on('error', (e) => errors.push(e));
    lb.on('error', (e) => errors.push(e));
    const sem = la.semaphore('acl', { permits: 1 });
    const lease = await sem.acquire();
    const waiting = lb.semaphore('acl', { permits: 1 }).acquire({ waitMs: 5_000 });
    await new Promise((r) => setTimeout(r, 50));
    await lease.extend(10_000);
    expect(await sem.availablePermits()).toBe(0);
    await lease.release();
    const next = await waiting;
    expect(next.token).toBeGreaterThan(lease.token);
    await next.release();
    expect(await sem.setPermits(2)).toBe(1);
    await sem.acquire({ permits: 2 });
    expect(await sem.forceRelease()).toBe(true);
    expect(await sem.availablePermits()).toBe(2);
    expect(errors).toEqual([]);
    await la.close();
    await lb.close();
  });

  it("a missing permission is the server's error, not foreign data", async () => {
    const locks = new LockClient(server.client({ username: 'nozset', password: 'secret' }));
    // The clean-up after the failed attempt meets the same refusal.
    locks.on('error', () => undefined);
    const error = await locks.semaphore('acl-noperm', { permits: 1 }).acquire().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisCommandError);
    expect(error).not.toBeInstanceOf(KeyConflictError);
    expect(String((error as Error).message)).toMatch(/can't run this command|NOPERM/);
    await locks.close();
  });
});
