import { electionKeys, portOf, runScript, type ElectionKeys } from '@holdfast/core/workspace';
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { electionScripts } from '../../src/election/election-calls.js';
import { useRedis } from '../helpers.js';

/** Direct calls of the election's acquire script: its contract, without the client around it. */
describe('election script contracts', () => {
  const fx = useRedis();
  let redis: Redis;
  beforeAll(async () => {
    redis = await fx.redis();
  });

  const keysOf = (name: string) => electionKeys(fx.prefix, name);
  const acquire = (k: ElectionKeys, owner: string, requestId: string, mode: string, termMs: number) =>
    runScript(portOf(redis)!, electionScripts.acquire, [k.lock, k.queue, k.waiters, k.fence], [owner, termMs, requestId, mode, termMs, k.channel, k.news, 'v']);

  /**
   * A PEXPIRE whose expiry is already past deletes the key: a term of 1 ms does
   * that whenever the server's clock ticks within the command, a TTL of 0 every
   * time. What the script writes after it would make a term hash without a TTL,
   * a name no campaign could use again.
   */
  it('a term over as it is granted leaves no term hash behind, on every path that grants one', async () => {
    // Granted outright, nobody in line.
    const free = keysOf('over-free');
    await acquire(free, 'o1', 'r1', 'try', 0);
    expect(await redis.exists(free.lock)).toBe(0);

    // A hand-off, confirmed by the candidate it was handed to.
    const confirmed = keysOf('over-confirm');
    await redis.hset(confirmed.lock, 'o2', '1', '@r2', '7', '@c', '1');
    await redis.pexpire(confirmed.lock, 60_000);
    await acquire(confirmed, 'o2', 'r2', 'confirm', 0);
    expect(await redis.exists(confirmed.lock)).toBe(0);

    // Handed to the caller itself: every candidate ahead of it gone.
    const own = keysOf('over-own');
    const [seconds] = await redis.time();
    await redis.rpush(own.queue, 'gone', 'r3');
    await redis.hset(own.waiters, 'r3', `${(Number(seconds) + 60) * 1000}|0|r3|o3`);
    await acquire(own, 'o3', 'r3', 'join', 0);
    expect(await redis.exists(own.lock)).toBe(0);
    await redis.del(own.queue, own.waiters);
  });
});
