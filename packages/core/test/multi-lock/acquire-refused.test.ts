import { lockKeys, multiAcquireScript, portOf, runScript } from '@holdfast/core/workspace';
import { readmeAcl, startRedis, type RedisServer, sameSlotNames } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The multi-lock's group script with one command of the README's ACL refused,
 * called directly, with nobody to clean up after it (the client's cancel
 * would): a refused command stops a script with its earlier writes applied,
 * so the script must leave all or none of the group taken, and no key
 * without a TTL, wherever it stops.
 */
describe('multi-acquire with one command refused', () => {
  let server: RedisServer;
  let admin: Redis;
  const acl = readmeAcl('core');
  const commands = acl.filter((a) => a.startsWith('+')).map((a) => a.slice(1));
  const rules = acl.slice(1).filter((a) => !a.startsWith('+'));
  const LEASE_MS = 5_000;

  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
    for (const command of commands) {
      await admin.call('ACL', 'SETUSER', `no-${command}`, ...rules, ...commands.filter((c) => c !== command).map((c) => `+${c}`));
    }
  });
  afterAll(() => server.stop());

  /** The group's keys and arguments for owner `A`, request `r1`. */
  const call = (names: readonly string[], mode: 'try' | 'join') => {
    const parts = names.map((name) => lockKeys('holdfast', name));
    const keys = [parts[0]!.fence, ...parts.flatMap((k) => [k.lock, k.queue, k.waiters])];
    const args = ['A', LEASE_MS, 'r1', mode, LEASE_MS, LEASE_MS, ...parts.map((k) => k.channel)];
    return { parts, keys, args };
  };

  /** Runs the group script as `user`: true when it granted the group (refused or busy: false). */
  const grantedAs = async (user: string, keys: readonly string[], args: readonly (string | number)[]) => {
    const redis = server.client({ username: user, password: 'secret' });
    try {
      const reply = await runScript(portOf(redis)!, multiAcquireScript, keys, args);
      return Number((reply as unknown[])[0]) === 1;
    } catch {
      return false;
    } finally {
      redis.disconnect();
    }
  };

  /** Every key of the group that exists has a TTL. */
  const withoutTtl = async (keys: readonly string[]) => {
    const ttls = await Promise.all(keys.map((key) => admin.pttl(key)));
    return keys.filter((_, i) => ttls[i] === -1 && !keys[i]!.endsWith(':fence'));
  };

  it('takes every part or none, and leaves no key without a TTL', async () => {
    const outcomes: string[] = [];
    for (const command of commands) {
      const names = sameSlotNames(`refused-${command}`, 3);
      const { parts, keys, args } = call(names, 'try');
      // Part 2 is this owner's already (a re-entry: HINCRBY), parts 1 and 3 are free.
      await admin.hset(parts[1]!.lock, 'A', '1', '@r0', '7');
      await admin.pexpire(parts[1]!.lock, 60_000);
      const granted = await grantedAs(`no-${command}`, keys, args);
      const counts = await Promise.all(parts.map((k) => admin.hget(k.lock, 'A')));
      if (granted) {
        expect(counts, command).toEqual(['1', '2', '1']);
      } else {
        outcomes.push(command);
        // None taken by this call: part 2 as it was, parts 1 and 3 free.
        expect(counts, command).toEqual([null, '1', null]);
      }
      expect(await withoutTtl(keys), command).toEqual([]);
    }
    // The refusals met on the way (each stops the script somewhere else).
    expect(outcomes).toEqual(expect.arrayContaining(['incr', 'hset', 'pexpire', 'hincrby']));
  });

  it('a queued attempt that is granted, refused part-way, holds nothing and leaves no key without a TTL', async () => {
    for (const command of commands) {
      const names = sameSlotNames(`refused-join-${command}`, 2);
      const { parts, keys, args } = call(names, 'join');
      // This request was queued on part 2 before; both parts are free now.
      await admin.rpush(parts[1]!.queue, 'r1');
      await admin.hset(parts[1]!.waiters, 'r1', `${Date.now() + 60_000}|${LEASE_MS}|r1|A`);
      await admin.pexpire(parts[1]!.queue, 60_000);
      await admin.pexpire(parts[1]!.waiters, 60_000);
      const granted = await grantedAs(`no-${command}`, keys, args);
      const counts = await Promise.all(parts.map((k) => admin.hget(k.lock, 'A')));
      expect(counts, command).toEqual(granted ? ['1', '1'] : [null, null]);
      expect(await withoutTtl(keys), command).toEqual([]);
    }
  });
});
