import type { LeaseLike, LockClientEvents, LockLike, RenewalTarget } from '@holdfast/core';
import type { Redis } from 'ioredis';
import type { Cluster as ValkeyCluster, Valkey } from 'iovalkey';
import { Redlock, type InstanceOutcome, type RedlockLease, type RedlockLock } from '@holdfast/redlock';
import { describe, expectTypeOf, it } from 'vitest';

describe('public types', () => {
  it('a Redlock lock is a core LockLike of RedlockLease, and a Redlock is a RenewalTarget', () => {
    expectTypeOf<RedlockLock>().toMatchTypeOf<LockLike<RedlockLease>>();
    expectTypeOf<RedlockLease>().toMatchTypeOf<LeaseLike>();
    expectTypeOf<RedlockLease['validityMs']>().toEqualTypeOf<number>();
    expectTypeOf<Redlock>().toMatchTypeOf<RenewalTarget>();
    expectTypeOf<Redis[]>().toMatchTypeOf<ConstructorParameters<typeof Redlock>[0]>();
    // Clients by shape: iovalkey's too (see core's RedisLike).
    expectTypeOf<Valkey[]>().toMatchTypeOf<ConstructorParameters<typeof Redlock>[0]>();
    expectTypeOf<(Redis | Valkey | ValkeyCluster)[]>().toMatchTypeOf<ConstructorParameters<typeof Redlock>[0]>();
  });

  it('events carry core’s payloads', () => {
    const redlock = null as unknown as Redlock;
    redlock.on('lost', (event) => expectTypeOf(event).toEqualTypeOf<LockClientEvents['lost'][0]>());
    redlock.on('acquired', (event) => expectTypeOf(event.validityMs).toEqualTypeOf<number | undefined>());
  });

  it('outcomes narrow by status', () => {
    const outcome = null as unknown as InstanceOutcome;
    if (outcome.status === 'busy') expectTypeOf(outcome.pttl).toEqualTypeOf<number>();
    if (outcome.status === 'error') expectTypeOf(outcome.timedOut).toEqualTypeOf<boolean>();
  });
});
