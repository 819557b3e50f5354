import { describe, expectTypeOf, it } from 'vitest';
import { LockClient, MultiLockReleaseError, type AcquiredEvent, type MultiLease, type MultiLock } from '@holdfast/core';

describe('multi-lock public types', () => {
  it('client.multiLock(names) and its methods', () => {
    expectTypeOf<LockClient['multiLock']>().parameters.toEqualTypeOf<[readonly string[]]>();
    expectTypeOf<LockClient['multiLock']>().returns.toEqualTypeOf<MultiLock>();
    expectTypeOf<MultiLock['acquire']>().returns.resolves.toEqualTypeOf<MultiLease>();
    expectTypeOf<MultiLock['tryAcquire']>().returns.resolves.toEqualTypeOf<MultiLease | null>();
    expectTypeOf<MultiLock['withLock']>().toBeCallableWith(async (lease: MultiLease) => lease.tokens.get('a'));
  });

  it('MultiLease state, and the additive event field', () => {
    expectTypeOf<MultiLease['tokens']>().toEqualTypeOf<ReadonlyMap<string, number>>();
    expectTypeOf<MultiLease['names']>().toEqualTypeOf<readonly string[]>();
    expectTypeOf<MultiLease['signal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<MultiLease>().toMatchTypeOf<AsyncDisposable>();
    expectTypeOf<AcquiredEvent['multiLock']>().toEqualTypeOf<readonly string[] | undefined>();
    expectTypeOf<MultiLockReleaseError['failures']>().toEqualTypeOf<ReadonlyMap<string, unknown>>();
  });
});
