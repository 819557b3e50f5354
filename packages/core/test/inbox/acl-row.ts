import { LockClient } from '@holdfast/core';
import { expect } from 'vitest';
import type { AclContext, AclRow } from '../acl-table.js';

/** Post, handling, a retry, dead-lettering, drain, pending, keys and recover, as the README's user. */
async function works(ctx: AclContext): Promise<void> {
  const redis = ctx.server.client({ username: 'locks', password: 'secret' });
  const locks = new LockClient(redis, { prefix: 'holdfast', leaseMs: 2_000 });
  const errors: unknown[] = [];
  locks.on('error', (error) => errors.push(error));
  const handled: string[] = [];
  const dead: string[] = [];
  const inbox = locks.inbox<string>('acl-inbox', {
    maxAttempts: 2,
    retryDelayMs: 1,
    handler: (_key, [message]) => {
      if (message === 'poison') throw new Error('refused');
      handled.push(message!);
    },
  });
  inbox.on('error', (error) => errors.push(error));
  inbox.on('dead', (event) => dead.push(event.message!));
  await locks.inbox<string>('acl-inbox').post('k', 'first');
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
}

/** The inbox needs no command beyond the README's list. */
export const inboxAcl: AclRow = { kind: 'inbox', works };
