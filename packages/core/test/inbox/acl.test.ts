import { LockClient } from '@holdfast/core';
import { readmeAcl, startRedis, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The inbox through the README's minimal ACL: every operation works with exactly that list. */
describe('minimal ACL: inbox', () => {
  let server: RedisServer;
  let admin: Redis;
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
    await admin.call('ACL', 'SETUSER', ...readmeAcl('core'));
  });
  afterAll(() => server.stop());

  it('the documented ACL runs post, handling, retries, dead-lettering, drain, pending, keys and recover', async () => {
    const redis = server.client({ username: 'locks', password: 'secret' });
    const locks = new LockClient(redis, { prefix: 'holdfast', leaseMs: 2_000 });
    const errors: unknown[] = [];
    locks.on('error', (error) => errors.push(error));
    const handled: string[] = [];
    const dead: string[] = [];
    const inbox = locks.inbox<string>('acl', {
      maxAttempts: 2,
      retryDelayMs: 1,
      handler: (_key, [message]) => {
        if (message === 'poison') throw new Error('refused');
        handled.push(message!);
      },
    });
    inbox.on('error', (error) => errors.push(error));
    inbox.on('dead', (event) => dead.push(event.message!));
    await locks.inbox<string>('acl').post('k', 'first');
    expect(await inbox.pending('k')).toBe(1);
    expect(await inbox.keys()).toEqual(['k']);
    expect(await inbox.recover()).toBe(1);
    await inbox.post('k', 'poison');
    await inbox.post('k', 'last');
    await inbox.drain('k', { waitMs: 10_000 });
    expect(handled).toEqual(['first', 'last']);
    expect(dead).toEqual(['poison']);
    expect(await inbox.keys()).toEqual([]);
    await inbox.close();
    await locks.close();
    redis.disconnect();
    expect(errors).toEqual([]);
  });
});
