import type { Redis } from 'ioredis';
import { KeyConflictError, type KeyConflictKind, type LockClient } from '@holdfast/core';
import { describe, expect, it } from 'vitest';
import { runOnceKeys } from '../../src/run-once/run-once-calls.js';
import { useRedis } from '../helpers.js';

/**
 * One row per kind: where its foreign data goes, and every call that decodes
 * a conflict for it (each decoding site once), each of which must name the kind.
 */
interface Row {
  readonly kind: KeyConflictKind;
  /** How the message names it. */
  readonly noun: string;
  /** Plants foreign data at the kind's key for `name`; returns the calls that must reject. */
  plant(locks: LockClient, redis: Redis, name: string, prefix: string): Promise<Array<() => Promise<unknown>>>;
}

const FOREIGN = 'not written by holdfast';

const rows: Row[] = [
  {
    kind: 'lock',
    noun: 'lock',
    async plant(locks, redis, name) {
      const lock = locks.lock(name);
      await redis.sadd(lock.keys.lock, FOREIGN);
      return [() => lock.acquire({ waitMs: 1_000 }), () => lock.forceRelease(), () => locks.multiLock([`${name}-free`, name]).acquire({ waitMs: 1_000 })];
    },
  },
  {
    kind: 'read-write-lock',
    noun: 'read-write lock',
    async plant(locks, redis, name) {
      const doc = locks.readWriteLock(name);
      await redis.sadd(doc.read.keys.lock, FOREIGN);
      return [() => doc.read.acquire({ waitMs: 1_000 }), () => doc.write.tryAcquire(), () => doc.forceRelease()];
    },
  },
  {
    kind: 'semaphore',
    noun: 'semaphore',
    async plant(locks, redis, name) {
      const sem = locks.semaphore(name, { permits: 2 });
      await redis.sadd(sem.keys.lock, FOREIGN);
      return [() => sem.acquire({ waitMs: 1_000 }), () => sem.availablePermits(), () => sem.forceRelease()];
    },
  },
  {
    kind: 'election',
    noun: 'election',
    async plant(locks, redis, name) {
      const election = locks.election(name);
      await redis.sadd(election.keys.lock, FOREIGN);
      return [() => election.campaign({ value: 'v', waitMs: 1_000 }), () => election.leader()];
    },
  },
  {
    kind: 'latch',
    noun: 'latch',
    async plant(locks, redis, name) {
      const latch = locks.countDownLatch(name);
      await redis.sadd(latch.keys.latch, FOREIGN);
      return [() => latch.trySetCount(1), () => latch.count()];
    },
  },
  {
    kind: 'barrier',
    noun: 'barrier',
    async plant(locks, redis, name) {
      const barrier = locks.barrier(name, { parties: 2 });
      await redis.sadd(barrier.keys.parties, FOREIGN);
      return [() => barrier.arrive({ waitMs: 1_000 }), () => barrier.state(), () => barrier.setParties(3)];
    },
  },
  {
    kind: 'run-once',
    noun: 'run-once key',
    async plant(locks, redis, name, prefix) {
      await redis.sadd(runOnceKeys(prefix, name).claim, FOREIGN);
      return [() => locks.runOnce(name, () => undefined, { ttlMs: 1_000 })];
    },
  },
];

describe('KeyConflictError names the kind whose key holds foreign data', () => {
  const fx = useRedis();

  it.each(rows)('$kind', async ({ kind, noun, plant }) => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const name = `conflict-${kind}`;
    const calls = await plant(locks, redis, name, fx.prefix);
    for (const call of calls) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(KeyConflictError);
      expect(error).toMatchObject({ code: 'ERR_KEY_CONFLICT', kind, lockName: name });
      expect((error as Error).message).toMatch(new RegExp(`^The key of ${noun} \`${name}\` holds data holdfast did not write`));
    }
  });
});
