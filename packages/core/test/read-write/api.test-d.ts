import { describe, expectTypeOf, it } from 'vitest';
import {
  LockClient,
  LockUpgradeError,
  ReadWriteLock,
  type AcquiredEvent,
  type HoldfastErrorCode,
  type Lease,
  type Lock,
  type LockLike,
  type LostEvent,
} from '@holdfast/core';

describe('read-write lock types', () => {
  it('has a Lock per side, with Leases', () => {
    const doc = ({} as LockClient).readWriteLock('doc');
    expectTypeOf(doc).toEqualTypeOf<ReadWriteLock>();
    expectTypeOf(doc.read).toEqualTypeOf<Lock>();
    expectTypeOf(doc.write).toEqualTypeOf<Lock>();
    expectTypeOf(doc.read).toMatchTypeOf<LockLike<Lease>>();
    expectTypeOf(doc.read.acquire()).resolves.toEqualTypeOf<Lease>();
    expectTypeOf(doc.write.tryAcquire()).resolves.toEqualTypeOf<Lease | null>();
    expectTypeOf(doc.read.withLock(async () => 1)).resolves.toEqualTypeOf<number>();
    expectTypeOf(doc.forceRelease()).resolves.toEqualTypeOf<boolean>();
  });

  it('tells the side in events and types the upgrade error', () => {
    expectTypeOf<AcquiredEvent['kind']>().toEqualTypeOf<'read' | 'write' | 'semaphore' | 'election' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox' | undefined>();
    expectTypeOf<LostEvent['kind']>().toEqualTypeOf<'read' | 'write' | 'semaphore' | 'election' | 'run-once' | 'idempotency' | 'single-flight' | 'inbox' | undefined>();
    expectTypeOf<LockUpgradeError['code']>().toEqualTypeOf<HoldfastErrorCode>();
    expectTypeOf<'ERR_LOCK_UPGRADE'>().toMatchTypeOf<HoldfastErrorCode>();
  });
});
