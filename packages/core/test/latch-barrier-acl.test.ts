import { KeyConflictError, LockClient, RedisCommandError } from '@holdfast/core';
import { readmeAcl, startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The minimal ACL documented in the README (read from it) covers every latch and barrier operation. */
describe('minimal ACL: latch and barrier', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core'));
    // The same rights less one command both scripts run.
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core').map((a) => (a === 'locks' ? 'nozset' : a)).filter((a) => a !== '+zrangebyscore'));
    admin.disconnect();
  });
  afterAll(() => server.stop());

  it('sets, counts down, waits, deletes; arrives, trips, breaks, resizes', async () => {
    const la = new LockClient(server.client({ username: 'locks', password: 'secret' }));
    const lb = new LockClient(server.client({ username: 'locks', password: 'secret' }));
    const errors: unknown[] = [];
    la.on('error', (e) => errors.push(e));
    lb.on('error', (e) => errors.push(e));
    const latch = la.countDownLatch('acl');
    expect(await latch.trySetCount(2)).toBe(true);
    const waiting = lb.countDownLatch('acl').wait({ waitMs: 5_000 });
    expect(await latch.countDown()).toBe(1);
    expect(await lb.countDownLatch('acl').countDown()).toBe(0);
    await waiting;
    expect(await latch.count()).toBe(0);
    await latch.trySetCount(1);
    expect(await latch.delete()).toBe(true);
    const barrier = la.barrier('acl', { parties: 2 });
    expect(await Promise.all([barrier.arrive(), lb.barrier('acl', { parties: 2 }).arrive()])).toEqual([{ generation: 0 }, { generation: 0 }]);
    expect(await barrier.setParties(3)).toBe(2);
    const broken = barrier.arrive().catch((e: unknown) => e);
    await expect(lb.barrier('acl', { parties: 3 }).arrive({ waitMs: 100 })).rejects.toThrow('Timed out');
    expect(await broken).toMatchObject({ code: 'ERR_BARRIER_BROKEN', reason: 'timeout' });
    expect(await barrier.state()).toEqual({ parties: 3, generation: 1, waiting: 0 });
    expect(errors).toEqual([]);
    await la.close();
    await lb.close();
  });

  it("a missing permission is the server's error, not foreign data", async () => {
    const locks = new LockClient(server.client({ username: 'nozset', password: 'secret' }));
    locks.on('error', () => undefined);
    for (const call of [() => locks.countDownLatch('noperm').countDown(), () => locks.barrier('noperm', { parties: 2 }).arrive()]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RedisCommandError);
      expect(error).not.toBeInstanceOf(KeyConflictError);
      expect(String((error as Error).message)).toMatch(/can't run this command|NOPERM/);
    }
    await locks.close();
  });
});
