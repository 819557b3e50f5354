import { describe, expectTypeOf, it } from 'vitest';
import { LockClient, type LostReason, type RenewalTarget } from '@holdfast/core';
import { Valkey } from 'iovalkey';
import {
  Watchdog,
  type LeaseLostEvent,
  type RenewalFailedEvent,
  type RenewedEvent,
  type WatchdogEvents,
  type WatchdogOptions,
} from '@holdfast/watchdog';

describe('watchdog public types', () => {
  it('takes any renewal target and documented options', () => {
    expectTypeOf(Watchdog).constructorParameters.toEqualTypeOf<[RenewalTarget, WatchdogOptions?]>();
    expectTypeOf<LockClient>().toMatchTypeOf<RenewalTarget>();
    expectTypeOf<WatchdogOptions['timeoutMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<WatchdogOptions['renewIntervalMs']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Watchdog['stop']>().returns.resolves.toBeVoid();
    expectTypeOf<Watchdog>().toMatchTypeOf<AsyncDisposable>();
  });

  it('watches a LockClient over an iovalkey client (clients are taken by shape)', () => {
    expectTypeOf(new Watchdog(new LockClient(new Valkey({ lazyConnect: true })))).toEqualTypeOf<Watchdog>();
  });

  it('events map', () => {
    expectTypeOf<WatchdogEvents['renewed']>().toEqualTypeOf<[event: RenewedEvent]>();
    expectTypeOf<WatchdogEvents['renewalFailed']>().toEqualTypeOf<[event: RenewalFailedEvent]>();
    expectTypeOf<WatchdogEvents['lost']>().toEqualTypeOf<[event: LeaseLostEvent]>();
    expectTypeOf<LeaseLostEvent['reason']>().toEqualTypeOf<LostReason>();
    expectTypeOf<RenewedEvent['count']>().toBeNumber();
    const dog = {} as Watchdog;
    dog.on('lost', (e) => expectTypeOf(e.token).toBeNumber());
    // @ts-expect-error unknown event
    dog.on('nope', () => undefined);
  });
});
