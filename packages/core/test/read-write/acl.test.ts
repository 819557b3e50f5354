import { LockClient } from '@holdfast/core';
import { readmeAcl, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The minimal ACL documented in the README (read from it) is enough for the read-write lock too. */
describe('minimal ACL and the read-write lock', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core'));
    admin.disconnect();
  });
  afterAll(() => server.stop());

  it('reads, writes, waits, hands off to every reader, downgrades, extends, inspects and force-releases', async () => {
    const a = server.client({ username: 'locks', password: 'secret' });
    const b = server.client({ username: 'locks', password: 'secret' });
    const admin = server.client();
    const errors: unknown[] = [];
    const la = new LockClient(a);
    const lb = new LockClient(b);
    la.on('error', (e) => errors.push(e));
    lb.on('error', (e) => errors.push(e));
    const doc = la.readWriteLock('acl');
    const read = await doc.read.acquire();
    const writer = lb.readWriteLock('acl').write.acquire({ waitMs: 5_000 });
    await waitFor(async () => (await admin.llen(doc.read.keys.queue)) === 1);
    const readers = [lb.readWriteLock('acl').read.acquire({ waitMs: 5_000 }), lb.readWriteLock('acl').read.acquire({ waitMs: 5_000 })];
    await waitFor(async () => (await admin.llen(doc.read.keys.queue)) === 3);
    await read.extend(10_000);
    await read.release();
    const w = await writer;
    expect(await doc.write.isLocked()).toBe(true);
    await w.release();
    for (const lease of await Promise.all(readers)) await lease.release();
    await doc.write.withLock(async () => {
      await (await doc.read.acquire()).release();
    });
    await doc.read.acquire();
    expect(await doc.forceRelease()).toBe(true);
    expect(errors).toEqual([]);
    await la.close();
    await lb.close();
    admin.disconnect();
  });
});
