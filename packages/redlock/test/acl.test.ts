import { QuorumError } from '@holdfast/redlock';
import { readmeAcl } from '@holdfast/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectCounts, useServers } from './helpers.js';

/** The ACL in Redlock's README (read from it), granted on every instance, is enough for every operation. */
describe('Redlock minimal ACL', () => {
  const fx = useServers(3);
  beforeAll(async () => {
    for (const server of fx.servers) {
      const admin = server.client();
      await admin.call('ACL', 'SETUSER', ...readmeAcl('redlock'));
      // Core's ACL only: the fencing round's GET/SET/HKEYS are missing.
      await admin.call('ACL', 'SETUSER', ...readmeAcl('core').map((a) => (a === 'locks' ? 'coreonly' : a)));
      admin.disconnect();
    }
  });

  it('acquires, waits, re-enters, extends, inspects and force-releases with the README ACL', async () => {
    const user = { username: 'locks', password: 'secret' };
    const a = fx.redlock({ prefix: 'holdfast', instanceTimeoutMs: 10_000 }, fx.clients(user));
    const b = fx.redlock({ prefix: 'holdfast', instanceTimeoutMs: 10_000 }, fx.clients(user));
    const errors: unknown[] = [];
    a.on('error', (e) => errors.push(e));
    const lock = a.lock('acl');
    const held = await lock.withLock(async (lease) => {
      const inner = await lock.acquire();
      await inner.extend(10_000);
      await inner.release();
      expect(await b.lock('acl').isLocked()).toBe(true);
      return lease.token;
    });
    const next = await b.lock('acl').acquire({ waitMs: 5_000 });
    expect(next.token).toBeGreaterThan(held);
    expect(await a.lock('acl').forceRelease()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('puts a lease back on an instance that lost it with the README ACL', async () => {
    const redlock = fx.redlock(
      { prefix: 'holdfast', instanceTimeoutMs: 10_000 },
      fx.clients({ username: 'locks', password: 'secret' }),
    );
    const errors: unknown[] = [];
    redlock.on('error', (e) => errors.push(e));
    const lock = redlock.lock('acl-restore');
    const lease = await lock.acquire({ leaseMs: 30_000 });
    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    const admin = fx.servers[2]!.client();
    await admin.del(lock.keys.lock);
    admin.disconnect();
    await lease.extend(30_000);
    await expectCounts(fx, lock.keys.lock, ['1', '1', '1']);
    expect(errors).toEqual([]);
    await lease.release();
  });

  it('without the fencing commands: QuorumError with reason error, quoting the server, not unreachable', async () => {
    // Generous instance timeouts: every instance answers (with its error), however busy the machine.
    const redlock = fx.redlock(
      { prefix: 'holdfast', instanceTimeoutMs: 10_000 },
      fx.clients({ username: 'coreonly', password: 'secret' }),
    );
    // Counters out of step on every instance (as after leases some instances missed): no two
    // grant with the same token, so the fence round has to run whichever answers first.
    for (const [i, steps] of [100, 200].entries()) {
      const admin = fx.servers[i]!.client();
      await admin.set(redlock.lock('acl-missing').keys.fence, steps);
      admin.disconnect();
    }
    const error = await redlock.lock('acl-missing').tryAcquire().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumError);
    expect((error as QuorumError).reason).toBe('error');
    expect((error as QuorumError).message).toMatch(/error: .*(NOPERM|can't run this command)/);
    expect((error as QuorumError).outcomes.filter((o) => o.status === 'error' && o.replied).length).toBeGreaterThanOrEqual(2);
    expect((error as QuorumError).operation).toBe('fence');
  });
});
