import { LockClient, fencedWrite, readFenced } from '@holdfast/core';
import { startRedis, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The minimal ACL documented in the README is enough for every operation. */
describe('minimal ACL', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
    const admin = server.client();
    await admin.call(
      'ACL', 'SETUSER', 'locks', 'on', '>secret', '~holdfast:*', '&holdfast:*',
      ...'+evalsha +eval +spublish +ssubscribe +sunsubscribe +publish +subscribe +unsubscribe +info +ping +hmget +hgetall +hget +hset +hdel +hincrby +hexists +exists +del +pexpire +pttl +incr +lpop +lindex +rpush +lrem +time'.split(' '),
    );
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
});
