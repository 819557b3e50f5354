import fc from 'fast-check';
import { LockClient, PermitCountMismatchError, type PermitLease, type Semaphore } from '@holdfast/core';
import { uniqueName } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useModelRedis, SemaphoreModel } from '@holdfast/test-utils/models';
import { FULL, TIMEOUT_MS } from './sizes.js';

/**
 * Model-based tests of the semaphore on real Redis: random programs of
 * tryAcquire (1–4 permits) / release / a holder's lease ending on the server
 * / extend / availablePermits / setPermits / a client with another count,
 * checked call by call against SemaphoreModel: the same grants and refusals,
 * the exact count, never more permits in use than the count, and tokens
 * strictly increasing.
 */

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? (FULL ? 300 : 25));
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_123);

interface Real {
  locks: LockClient;
  other: LockClient;
  sem: Semaphore;
  observer: Redis;
  /** Live leases by model id. */
  leases: Map<number, PermitLease>;
  lastToken: number;
}

type Cmd = fc.AsyncCommand<SemaphoreModel, Real>;

/** The k-th live lease (in grant order), if any. */
function pick(model: SemaphoreModel, k: number): number | undefined {
  const ids = [...model.holders.keys()];
  return ids.length === 0 ? undefined : ids[k % ids.length];
}

async function usedOnServer(real: Real): Promise<number> {
  const hash = await real.observer.hgetall(real.sem.keys.lock);
  // Permits in use are the holders' ('<permits>|<token>'; '#' is the count, '=' their sum, '-' an entry given back).
  const used = Object.entries(hash)
    .filter(([field, value]) => field !== '#' && field !== '=' && value !== '-')
    .reduce((sum, [, value]) => sum + Number(value.split('|')[0]), 0);
  // The stored sum agrees with the entries.
  if (hash['#'] !== undefined) expect(Number(hash['='])).toBe(used);
  return used;
}

class TryAcquire implements Cmd {
  constructor(readonly permits: number) {}
  check = () => true;
  async run(model: SemaphoreModel, real: Real): Promise<void> {
    const permits = Math.min(this.permits, model.count);
    const lease = await real.sem.tryAcquire({ permits, leaseMs: 60_000 });
    const id = model.tryAcquire(permits);
    expect(lease === null).toBe(id === null);
    if (lease && id !== null) {
      expect(lease.permits).toBe(permits);
      expect(lease.token).toBeGreaterThan(real.lastToken);
      real.lastToken = lease.token;
      real.leases.set(id, lease);
    }
    expect(model.used).toBeLessThanOrEqual(Math.max(model.count, model.used));
  }
  toString = () => `tryAcquire(${this.permits})`;
}

class Release implements Cmd {
  constructor(readonly k: number) {}
  check = (model: Readonly<SemaphoreModel>) => model.holders.size > 0;
  async run(model: SemaphoreModel, real: Real): Promise<void> {
    const id = pick(model, this.k)!;
    await real.leases.get(id)!.release();
    real.leases.delete(id);
    model.drop(id);
    expect(await usedOnServer(real)).toBe(model.used);
  }
  toString = () => `release(#${this.k})`;
}

/** The holder's lease ends by server time (its process died): the next count purges it. */
class Expire implements Cmd {
  constructor(readonly k: number) {}
  check = (model: Readonly<SemaphoreModel>) => model.holders.size > 0;
  async run(model: SemaphoreModel, real: Real): Promise<void> {
    const id = pick(model, this.k)!;
    const lease = real.leases.get(id)!;
    const hash = await real.observer.hgetall(real.sem.keys.lock);
    const owner = Object.entries(hash).find(([field, value]) => field !== '#' && field !== '=' && value.endsWith(`|${lease.token}`))![0];
    await real.observer.zadd(real.sem.keys.expiry, 1, owner);
    model.drop(id);
    real.leases.delete(id);
    // Its release now finds nothing: the lease is reported lost, never released twice.
    await expect(lease.release()).rejects.toMatchObject({ code: 'ERR_LOCK_NOT_HELD' });
    expect(lease.signal.reason).toMatchObject({ code: 'ERR_LOCK_LOST', reason: 'deleted' });
  }
  toString = () => `expire(#${this.k})`;
}

class Extend implements Cmd {
  constructor(readonly k: number) {}
  check = (model: Readonly<SemaphoreModel>) => model.holders.size > 0;
  async run(model: SemaphoreModel, real: Real): Promise<void> {
    const lease = real.leases.get(pick(model, this.k)!)!;
    await lease.extend(90_000);
    expect(lease.isHeld).toBe(true);
  }
  toString = () => `extend(#${this.k})`;
}

class Available implements Cmd {
  check = () => true;
  async run(model: SemaphoreModel, real: Real): Promise<void> {
    expect(await real.sem.availablePermits()).toBe(model.available());
  }
  toString = () => 'availablePermits()';
}

class SetPermits implements Cmd {
  constructor(readonly count: number) {}
  check = () => true;
  async run(model: SemaphoreModel, real: Real): Promise<void> {
    await real.sem.setPermits(this.count);
    model.count = this.count;
    expect(await real.sem.availablePermits()).toBe(model.available());
  }
  toString = () => `setPermits(${this.count})`;
}

/** A client created with another count is refused, and changes nothing. */
class Mismatch implements Cmd {
  check = () => true;
  async run(model: SemaphoreModel, real: Real): Promise<void> {
    const wrong = real.other.semaphore(real.sem.name, { permits: model.count + 1 });
    await expect(wrong.tryAcquire()).rejects.toBeInstanceOf(PermitCountMismatchError);
    expect(await usedOnServer(real)).toBe(model.used);
  }
  toString = () => 'mismatchedClient.tryAcquire()';
}

const commands = [
  fc.integer({ min: 1, max: 4 }).map((n) => new TryAcquire(n)),
  fc.integer({ min: 1, max: 4 }).map((n) => new TryAcquire(n)),
  fc.nat({ max: 7 }).map((k) => new Release(k)),
  fc.nat({ max: 7 }).map((k) => new Expire(k)),
  fc.nat({ max: 7 }).map((k) => new Extend(k)),
  fc.constant(new Available()),
  fc.integer({ min: 1, max: 5 }).map((n) => new SetPermits(n)),
  fc.constant(new Mismatch()),
];

describe('model-based: Semaphore against the reference model', () => {
  const redis = useModelRedis();

  it(
    'grants, refuses, counts and expires as the model says, tokens increasing',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.commands(commands, { maxCommands: 25 }), async (count, cmds) => {
          const locks = new LockClient(redis.clients[0]!, { prefix: 'semmodel' });
          const other = new LockClient(redis.clients[1]!, { prefix: 'semmodel' });
          const sem = locks.semaphore(uniqueName('sem'), { permits: count });
          // Stored at once: on a semaphore never used, the first client's count is the one stored.
          await sem.setPermits(count);
          const real: Real = { locks, other, sem, observer: redis.observer, leases: new Map(), lastToken: 0 };
          try {
            await fc.asyncModelRun(() => ({ model: new SemaphoreModel(count), real }), cmds);
          } finally {
            await locks.close({ release: true });
            await other.close();
          }
        }),
        { numRuns: NUM_RUNS, seed: SEED },
      );
    },
    TIMEOUT_MS,
  );
});
