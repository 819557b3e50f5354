import { describe, expectTypeOf, it } from 'vitest';
import type {
  Arrival,
  ArriveOptions,
  Barrier,
  BarrierBrokenError,
  BarrierBrokenReason,
  BarrierOptions,
  BarrierState,
  BrokenEvent,
  CountDownLatch,
  CountDownLatchOptions,
  CountedDownEvent,
  HoldfastErrorCode,
  LockClient,
  LockClientEvents,
  PartyCountMismatchError,
  SyncMessage,
  SyncWaitOptions,
  TrippedEvent,
} from '@holdfast/core';

describe('public types: count-down latch and barrier', () => {
  it('client.countDownLatch(name, options?) and its methods', () => {
    expectTypeOf<LockClient['countDownLatch']>().parameters.toEqualTypeOf<[string, (CountDownLatchOptions | undefined)?]>();
    expectTypeOf<LockClient['countDownLatch']>().returns.toEqualTypeOf<CountDownLatch>();
    expectTypeOf<CountDownLatch['trySetCount']>().returns.resolves.toEqualTypeOf<boolean>();
    expectTypeOf<CountDownLatch['countDown']>().returns.resolves.toEqualTypeOf<number>();
    expectTypeOf<CountDownLatch['count']>().returns.resolves.toEqualTypeOf<number>();
    expectTypeOf<CountDownLatch['wait']>().parameters.toEqualTypeOf<[(SyncWaitOptions | undefined)?]>();
    expectTypeOf<CountDownLatch['wait']>().returns.resolves.toEqualTypeOf<void>();
    expectTypeOf<CountDownLatch['countDownAndWait']>().returns.resolves.toEqualTypeOf<void>();
    expectTypeOf<CountDownLatch['delete']>().returns.resolves.toEqualTypeOf<boolean>();
  });

  it('client.barrier(name, { parties }) and its methods', () => {
    expectTypeOf<LockClient['barrier']>().parameters.toEqualTypeOf<[string, BarrierOptions]>();
    expectTypeOf<Barrier['arrive']>().parameters.toEqualTypeOf<[(ArriveOptions | undefined)?]>();
    expectTypeOf<Barrier['arrive']>().returns.resolves.toEqualTypeOf<Arrival>();
    expectTypeOf<Arrival['generation']>().toEqualTypeOf<number>();
    expectTypeOf<Barrier['state']>().returns.resolves.toEqualTypeOf<BarrierState>();
    expectTypeOf<Barrier['setParties']>().returns.resolves.toEqualTypeOf<number | undefined>();
  });

  it('errors, events and telemetry carry their kind', () => {
    expectTypeOf<BarrierBrokenError['reason']>().toEqualTypeOf<BarrierBrokenReason>();
    expectTypeOf<BarrierBrokenReason>().toEqualTypeOf<'lost' | 'timeout' | 'aborted' | 'closed'>();
    expectTypeOf<'ERR_BARRIER_BROKEN' | 'ERR_PARTY_COUNT_MISMATCH'>().toMatchTypeOf<HoldfastErrorCode>();
    expectTypeOf<PartyCountMismatchError['stored']>().toEqualTypeOf<number>();
    expectTypeOf<LockClientEvents['countedDown']>().toEqualTypeOf<[event: CountedDownEvent]>();
    expectTypeOf<LockClientEvents['tripped']>().toEqualTypeOf<[event: TrippedEvent]>();
    expectTypeOf<LockClientEvents['broken']>().toEqualTypeOf<[event: BrokenEvent]>();
    expectTypeOf<CountedDownEvent['kind']>().toEqualTypeOf<'latch'>();
    expectTypeOf<BrokenEvent['kind']>().toEqualTypeOf<'barrier'>();
    expectTypeOf<SyncMessage['kind']>().toEqualTypeOf<'latch' | 'barrier'>();
  });
});
