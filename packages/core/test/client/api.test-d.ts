import { describe, expectTypeOf, it } from 'vitest';
import type { Cluster, Redis } from 'ioredis';
import {
  HoldfastError,
  LockClient,
  LockLostError,
  LockTimeoutError,
  isHoldfastError,
  type AcquiredEvent,
  type Lease,
  type LeaseLike,
  type Lock,
  type LockClientEvents,
  type LockClientOptions,
  type LockLike,
  type LostEvent,
  type LostReason,
  type HoldfastErrorCode,
  type RedisLike,
} from '@holdfast/core';

describe('public types', () => {
  it('LockClient takes a Redis or a Cluster and options', () => {
    expectTypeOf(LockClient).constructorParameters.toEqualTypeOf<[RedisLike, LockClientOptions?]>();
    expectTypeOf<Redis>().toMatchTypeOf<RedisLike>();
    expectTypeOf<Cluster>().toMatchTypeOf<RedisLike>();
    expectTypeOf<LockClientOptions['leaseMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<LockClient['lock']>().returns.toEqualTypeOf<Lock>();
  });

  it('Lock methods', () => {
    expectTypeOf<Lock['acquire']>().returns.resolves.toEqualTypeOf<Lease>();
    expectTypeOf<Lock['tryAcquire']>().returns.resolves.toEqualTypeOf<Lease | null>();
    expectTypeOf<Lock['isLocked']>().returns.resolves.toBeBoolean();
    expectTypeOf<Lock['remainingTtlMs']>().returns.resolves.toBeNumber();
    expectTypeOf<Lock['forceRelease']>().returns.resolves.toBeBoolean();
    expectTypeOf<Lock>().toMatchTypeOf<LockLike<Lease>>();
    const lock = {} as Lock;
    expectTypeOf(lock.withLock(async (lease) => lease.token)).resolves.toBeNumber();
    expectTypeOf(lock.withLock(() => 'sync')).resolves.toBeString();
    // @ts-expect-error waitMs is a number
    void lock.acquire({ waitMs: '5' });
  });

  it('Lease', () => {
    expectTypeOf<Lease['token']>().toBeNumber();
    expectTypeOf<Lease['holdCount']>().toBeNumber();
    expectTypeOf<Lease['name']>().toBeString();
    expectTypeOf<Lease['signal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<Lease['release']>().returns.resolves.toBeVoid();
    expectTypeOf<Lease['extend']>().parameters.toEqualTypeOf<[leaseMs?: number]>();
    expectTypeOf<Lease>().toMatchTypeOf<AsyncDisposable>();
    expectTypeOf<Lease>().toMatchTypeOf<LeaseLike>();
  });

  it('events map', () => {
    expectTypeOf<LockClientEvents['acquired']>().toEqualTypeOf<[event: AcquiredEvent]>();
    expectTypeOf<LostEvent['reason']>().toEqualTypeOf<LostReason>();
    expectTypeOf<LostReason>().toEqualTypeOf<'expired' | 'taken' | 'deleted' | 'unreachable' | 'closed'>();
    const locks = {} as LockClient;
    locks.on('lost', (e) => expectTypeOf(e.error).toEqualTypeOf<LockLostError>());
    locks.on('acquired', (e) => expectTypeOf(e.waitedMs).toBeNumber());
    // @ts-expect-error unknown event
    locks.on('nope', () => undefined);
  });

  it('errors', () => {
    expectTypeOf<LockTimeoutError>().toMatchTypeOf<HoldfastError>();
    expectTypeOf<HoldfastError['code']>().toEqualTypeOf<HoldfastErrorCode>();
    const e: unknown = new Error();
    if (isHoldfastError(e)) expectTypeOf(e).toEqualTypeOf<HoldfastError>();
    expectTypeOf<LockLostError['reason']>().toEqualTypeOf<LostReason>();
  });
});
