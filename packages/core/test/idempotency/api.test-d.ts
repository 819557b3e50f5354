import { describe, expectTypeOf, it } from 'vitest';
import type {
  FlightClaim,
  HoldfastErrorCode,
  Idempotency,
  IdempotencyClaim,
  IdempotencyConflictError,
  IdempotencyRecord,
  IdempotencyResult,
  LockClient,
  SingleFlightError,
} from '@holdfast/core';

declare const locks: LockClient;

describe('public types: idempotency and singleFlight', () => {
  it('run resolves to the value fn resolves to, with replayed and token; get to a record of the idempotency type', async () => {
    const payments = locks.idempotency<{ charge: string }>('payments', { ttlMs: 1_000, serialize: (v) => v.charge, deserialize: (charge) => ({ charge }) });
    expectTypeOf(payments).toEqualTypeOf<Idempotency<{ charge: string }>>();
    const result = await payments.run('order-1', async (claim) => {
      expectTypeOf(claim).toEqualTypeOf<IdempotencyClaim>();
      return { charge: 'ch_1' };
    }, { fingerprint: 'sha', waitMs: 0 });
    expectTypeOf(result).toEqualTypeOf<IdempotencyResult<{ charge: string }>>();
    expectTypeOf(result.replayed).toEqualTypeOf<boolean>();
    expectTypeOf(await payments.get('order-1')).toEqualTypeOf<IdempotencyRecord<{ charge: string }> | null>();
    expectTypeOf(await payments.forget('order-1')).toEqualTypeOf<boolean>();
  });

  it('singleFlight resolves to what fn resolves to; its errors carry their codes', async () => {
    const rates = await locks.singleFlight('fx', async (claim) => {
      expectTypeOf(claim).toEqualTypeOf<FlightClaim>();
      return 1.08;
    }, { leaseMs: 10_000, waitMs: 5_000 });
    expectTypeOf(rates).toEqualTypeOf<number>();
    expectTypeOf<IdempotencyConflictError['key']>().toEqualTypeOf<string>();
    expectTypeOf<SingleFlightError['cause']>().toEqualTypeOf<{ readonly name: string; readonly message: string; readonly code?: string }>();
    expectTypeOf<'ERR_IDEMPOTENCY_IN_PROGRESS' | 'ERR_IDEMPOTENCY_CONFLICT' | 'ERR_RESULT_VALUE' | 'ERR_SINGLE_FLIGHT'>().toMatchTypeOf<HoldfastErrorCode>();
  });
});
