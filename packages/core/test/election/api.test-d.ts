import { describe, expectTypeOf, it } from 'vitest';
import type {
  CampaignOptions,
  Election,
  ElectionOptions,
  HoldfastErrorCode,
  Leader,
  LeadershipLostError,
  LockClient,
  LostReason,
  ObserveOptions,
  Term,
} from '@holdfast/core';

describe('public types: leader election', () => {
  it('client.election(name, { termMs }) and its methods', () => {
    expectTypeOf<LockClient['election']>().parameters.toEqualTypeOf<[string, ElectionOptions?]>();
    expectTypeOf<LockClient['election']>().returns.toEqualTypeOf<Election>();
    expectTypeOf<Election['campaign']>().parameters.toEqualTypeOf<[CampaignOptions]>();
    expectTypeOf<Election['campaign']>().returns.resolves.toEqualTypeOf<Term>();
    expectTypeOf<Election['leader']>().returns.resolves.toEqualTypeOf<Leader | null>();
    expectTypeOf<Election['observe']>().parameters.toEqualTypeOf<[ObserveOptions?]>();
    expectTypeOf<Election['observe']>().returns.toEqualTypeOf<AsyncIterable<Leader | null>>();
    expectTypeOf<CampaignOptions['value']>().toEqualTypeOf<string>();
    expectTypeOf<Leader>().toEqualTypeOf<{ readonly value: string; readonly epoch: number }>();
  });

  it('a term: epoch, value, signal, isLeader, proclaim, resign, await using', () => {
    expectTypeOf<Term['epoch']>().toEqualTypeOf<number>();
    expectTypeOf<Term['value']>().toEqualTypeOf<string>();
    expectTypeOf<Term['signal']>().toEqualTypeOf<AbortSignal>();
    expectTypeOf<Term['isLeader']>().toEqualTypeOf<boolean>();
    expectTypeOf<Term['proclaim']>().parameters.toEqualTypeOf<[string]>();
    expectTypeOf<Term['resign']>().returns.resolves.toEqualTypeOf<void>();
    expectTypeOf<Term>().toMatchTypeOf<AsyncDisposable>();
  });

  it('LeadershipLostError has its code and reason', () => {
    expectTypeOf<'ERR_LEADERSHIP_LOST'>().toMatchTypeOf<HoldfastErrorCode>();
    expectTypeOf<LeadershipLostError['reason']>().toEqualTypeOf<LostReason>();
    expectTypeOf<LeadershipLostError['epoch']>().toEqualTypeOf<number>();
  });
});
