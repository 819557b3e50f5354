import { LockClient, LockTimeoutError, RedisCommandError, RedisTimeoutError } from '@holdfast/core';
import { readmeAcl, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';

const caught = (promise: Promise<unknown>) => promise.then((value) => value, (error: unknown) => error);

/**
 * A party that gave up must not be counted after it: its arrival ends with
 * its wait even when its leave cannot reach Redis (a partition, a command the
 * ACL refuses), and a trip stopped part-way by a refused command drops its
 * parties. Each test then checks that a lone arrival does not trip the barrier.
 */
describe('barrier: a party that gave up no longer counts', () => {
  const fx = useProxyFaults();

  /** A client whose errors are kept, closed after the test. */
  function track(locks: LockClient): unknown[] {
    const errors: unknown[] = [];
    locks.on('error', (error) => errors.push(error));
    return errors;
  }

  /** A client of a user with the README's ACL less `command`. */
  async function refusing(command: string): Promise<{ locks: LockClient; errors: unknown[] }> {
    const user = `no-${command}`;
    const rules = readmeAcl('core').slice(1).filter((rule) => rule !== `+${command}`);
    await fx.admin.call('ACL', 'SETUSER', user, 'reset', ...rules);
    const locks = new LockClient(fx.server.client({ username: user, password: 'secret' }));
    fx.onCleanup(() => locks.close());
    return { locks, errors: track(locks) };
  }

  /** Rejects with LockTimeoutError when the barrier does not trip for this arrival alone. */
  const loneArrival = (name: string) => caught(fx.locks().barrier(name, { parties: 2 }).arrive({ waitMs: 300 }));

  const waiting = (key: string, count: number) => waitFor(async () => (await fx.admin.zcount(key, '-inf', '(inf')) === count, { timeoutMs: 10_000 });

  it('cut off from Redis when its waitMs ends, a party stops counting by the time it rejects', async () => {
    const cutOff = await fx.throughProxy({ commandTimeoutMs: 300, retries: 0 });
    const errors = track(cutOff);
    const barrier = cutOff.barrier('cut', { parties: 2 });
    const party = caught(barrier.arrive({ leaseMs: 20_000, waitMs: 2_000 }));
    await waiting(barrier.keys.parties, 1);
    fx.proxy.blackhole(true);
    expect(await party).toBeInstanceOf(LockTimeoutError);
    // Its leave did not reach Redis.
    expect(errors.some((error) => error instanceof RedisTimeoutError)).toBe(true);
    expect(await loneArrival('cut')).toBeInstanceOf(LockTimeoutError);
    fx.proxy.blackhole(false);
  });

  it('with ZSCORE refused (every call reads the mark of the sorted sets with it first), the arrival rejects with the refusal at once and never counts', async () => {
    const { locks } = await refusing('zscore');
    const refused = await caught(locks.barrier('zscore', { parties: 2 }).arrive({ leaseMs: 20_000, waitMs: 500 }));
    expect(refused).toBeInstanceOf(RedisCommandError);
    expect(String((refused as Error).message)).toMatch(/can't run this command|NOPERM/);
    expect(await loneArrival('zscore')).toBeInstanceOf(LockTimeoutError);
  });

  it('with HDEL refused, a trip that stops part-way still drops its parties: both go through, and are not counted again', async () => {
    const a = await refusing('hdel');
    const b = await refusing('hdel');
    const first = caught(a.locks.barrier('hdel', { parties: 2 }).arrive({ waitMs: 10_000 }));
    await waiting(a.locks.barrier('hdel', { parties: 2 }).keys.parties, 1);
    // The last arrival trips it, then the script stops at HDEL.
    const last = await caught(b.locks.barrier('hdel', { parties: 2 }).arrive({ waitMs: 10_000 }));
    expect(await loneArrival('hdel')).toBeInstanceOf(LockTimeoutError);
    // The last arrival learns that it tripped, and goes through (its error reported).
    expect(last).toEqual({ generation: 0 });
    expect(b.errors.some((error) => error instanceof RedisCommandError)).toBe(true);
    expect(await first).toEqual({ generation: 0 });
  });
});
