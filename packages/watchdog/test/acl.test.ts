import { LockClient } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { readmeAcl, startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The ACL in the watchdog's README (read from it) is enough for renewal. */
describe('watchdog minimal ACL', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('watchdog'));
    admin.disconnect();
  });
  afterAll(() => server?.stop());

  it('renews leases past several lease lengths with no failure', async () => {
    const redis = server.client({ username: 'locks', password: 'secret' });
    const locks = new LockClient(redis);
    const dog = new Watchdog(locks, { timeoutMs: 1_000 }); // a lease no stall of a busy machine outlasts
    const failures: unknown[] = [];
    dog.on('renewalFailed', (e) => failures.push(e.error));
    locks.on('error', (e) => failures.push(e));
    const lease = await locks.lock('acl-renewed').acquire();
    await new Promise((r) => setTimeout(r, 2_500));
    expect(lease.isHeld).toBe(true);
    expect(failures).toEqual([]);
    await lease.release();
    await dog.stop();
    await locks.close();
    redis.disconnect();
  });
});
