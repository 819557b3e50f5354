import { describe, expectTypeOf, it } from 'vitest';
import type {
  AcquiredEvent,
  HoldfastErrorCode,
  LeaseLike,
  LockClient,
  LostEvent,
  PermitAcquireOptions,
  PermitCountMismatchError,
  PermitLease,
  Semaphore,
  SemaphoreOptions,
} from '@holdfast/core';

describe('public types: semaphores', () => {
  it('client.semaphore(name, { permits }) and its methods', () => {
    expectTypeOf<LockClient['semaphore']>().parameters.toEqualTypeOf<[string, SemaphoreOptions]>();
    expectTypeOf<LockClient['semaphore']>().returns.toEqualTypeOf<Semaphore>();
    expectTypeOf<Semaphore['acquire']>().returns.resolves.toEqualTypeOf<PermitLease>();
    expectTypeOf<Semaphore['tryAcquire']>().returns.resolves.toEqualTypeOf<PermitLease | null>();
    expectTypeOf<Semaphore['availablePermits']>().returns.resolves.toEqualTypeOf<number>();
    expectTypeOf<Semaphore['setPermits']>().returns.resolves.toEqualTypeOf<number | undefined>();
    expectTypeOf<Semaphore['forceRelease']>().returns.resolves.toEqualTypeOf<boolean>();
    expectTypeOf<PermitAcquireOptions['permits']>().toEqualTypeOf<number | undefined>();
  });

  it('a PermitLease is a LeaseLike with its permits', () => {
    expectTypeOf<PermitLease>().toMatchTypeOf<LeaseLike>();
    expectTypeOf<PermitLease['permits']>().toEqualTypeOf<number>();
  });

  it('events say which kind; the mismatch error has its code', () => {
    expectTypeOf<AcquiredEvent['kind']>().toEqualTypeOf<'read' | 'write' | 'semaphore' | 'election' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox' | undefined>();
    expectTypeOf<LostEvent['kind']>().toEqualTypeOf<'read' | 'write' | 'semaphore' | 'election' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox' | undefined>();
    expectTypeOf<'ERR_PERMIT_COUNT_MISMATCH'>().toMatchTypeOf<HoldfastErrorCode>();
    expectTypeOf<PermitCountMismatchError['stored']>().toEqualTypeOf<number>();
  });
});
