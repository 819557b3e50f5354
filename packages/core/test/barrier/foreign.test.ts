import { KeyConflictError, type Barrier, type LockClient } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useSyncServer } from '../latch/latch-fixture.js';

type Key = 'barrier' | 'parties' | 'records';

/** Data holdfast did not write, planted in place of whatever is at one of a barrier's keys. */
interface Plant {
  readonly key: Key;
  readonly data: string;
  write(redis: Redis, key: string): Promise<unknown>;
}

// Scores in the past: a script that took them for its own would purge them.
const zset = (key: Key): Plant => ({ key, data: 'a sorted set', write: (redis, at) => redis.zadd(at, 1, 'a', 2, 'b') });
const string = (key: Key): Plant => ({ key, data: 'a string', write: (redis, at) => redis.set(at, 'x') });
const plants: Plant[] = [
  zset('parties'),
  zset('records'),
  string('parties'),
  string('records'),
  string('barrier'),
  { key: 'barrier', data: 'a list', write: (redis, at) => redis.rpush(at, 'a', 'b') },
  { key: 'barrier', data: 'a hash without a count', write: (redis, at) => redis.hset(at, 'other', '1') },
];

/** Every key of the barrier as it is: its value (DUMP) and absolute expiry; any write changes one. */
async function snapshot(redis: Redis, barrier: Barrier): Promise<unknown[]> {
  const { keys } = barrier;
  return Promise.all([keys.barrier, keys.parties, keys.records].flatMap((key) => [redis.dumpBuffer(key), redis.call('PEXPIRETIME', key)]));
}

const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

/**
 * Each row plants foreign data at one key and calls each barrier operation on it: every one
 * rejects with KeyConflictError before it writes anything, and the data stays as it was.
 */
describe('a barrier whose key holds data holdfast did not write', () => {
  const fx = useSyncServer();

  /** A client and a barrier of 2 under a fresh prefix; `used`: one generation tripped already (hash and records exist). */
  async function setUp(used: boolean): Promise<{ locks: LockClient; barrier: Barrier; admin: Redis }> {
    const locks = fx.client({ prefix: fx.prefix() });
    const barrier = locks.barrier('planted', { parties: 2 });
    if (used) expect(await Promise.all([barrier.arrive(), barrier.arrive()])).toEqual([{ generation: 0 }, { generation: 0 }]);
    return { locks, barrier, admin: fx.redis() };
  }

  async function plant(admin: Redis, barrier: Barrier, { key, write }: Plant): Promise<void> {
    await admin.del(barrier.keys[key]);
    await write(admin, barrier.keys[key]);
  }

  const calls: Array<[string, (barrier: Barrier) => Promise<unknown>]> = [
    ['arrive', (barrier) => barrier.arrive({ waitMs: 1_000 })],
    ['state', (barrier) => barrier.state()],
    ['setParties', (barrier) => barrier.setParties(1)],
  ];

  describe.each([
    ['never used', false],
    ['in use', true],
  ])('%s', (_, used) => {
    it.each(plants)('$data at $key: arrive, state and setParties reject, nothing is written', async (planted) => {
      const { barrier, admin } = await setUp(used);
      await plant(admin, barrier, planted);
      const before = await snapshot(admin, barrier);
      for (const [what, call] of calls) {
        const error = await caught(call(barrier));
        expect(error, what).toBeInstanceOf(KeyConflictError);
        expect(error, what).toMatchObject({ kind: 'barrier', lockName: 'planted' });
        expect(await snapshot(admin, barrier), what).toEqual(before);
      }
    });
  });

  /** A party waiting at a barrier in use, with a lease long enough that only a message wakes it. */
  async function waitingParty(signal?: AbortSignal) {
    const { locks, barrier, admin } = await setUp(true);
    const errors: unknown[] = [];
    locks.on('error', (error) => errors.push(error));
    const waiting = caught(barrier.arrive({ leaseMs: 60_000, ...(signal && { signal }) }));
    await waitFor(async () => (await admin.zcount(barrier.keys.parties, '-inf', '(inf')) === 1, { timeoutMs: 10_000 });
    return { barrier, admin, errors, waiting };
  }

  it.each(plants)('$data at $key under a waiting party: its renewal rejects, nothing is written', async (planted) => {
    const { barrier, admin, waiting } = await waitingParty();
    await plant(admin, barrier, planted);
    const before = await snapshot(admin, barrier);
    // A wake-up: the party renews its lease and looks.
    await admin.call('SPUBLISH', barrier.keys.channel, 'a');
    const error = await waiting;
    expect(error).toBeInstanceOf(KeyConflictError);
    expect(error).toMatchObject({ kind: 'barrier', lockName: 'planted' });
    expect(await snapshot(admin, barrier)).toEqual(before);
  });

  it.each(plants)('$data at $key under a party that gives up: its leave reports it, nothing is written', async (planted) => {
    const controller = new AbortController();
    const { barrier, admin, errors, waiting } = await waitingParty(controller.signal);
    await plant(admin, barrier, planted);
    const before = await snapshot(admin, barrier);
    const reason = new Error('enough');
    controller.abort(reason);
    expect(await waiting).toBe(reason);
    expect(errors).toEqual([expect.any(KeyConflictError)]);
    expect(errors[0]).toMatchObject({ kind: 'barrier', lockName: 'planted' });
    expect(await snapshot(admin, barrier)).toEqual(before);
  });
});
