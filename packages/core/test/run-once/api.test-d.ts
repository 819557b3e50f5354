import { describe, expectTypeOf, it } from 'vitest';
import type { LockClient, RunCoordinatorLike, RunOnceClaim, RunOnceOptions, RunOnceResult } from '@holdfast/core';
import type { RunCoordinator } from 'node-cron';

declare const locks: LockClient;

describe('public types: runOnce and runCoordinator', () => {
  it('runOnce resolves to a result narrowed by `ran`, with what fn resolves to', async () => {
    const outcome = await locks.runOnce('report', async (claim) => {
      expectTypeOf(claim).toEqualTypeOf<RunOnceClaim>();
      expectTypeOf(claim.signal).toEqualTypeOf<AbortSignal>();
      return 42;
    }, { ttlMs: 1_000 });
    expectTypeOf(outcome).toEqualTypeOf<RunOnceResult<number>>();
    if (outcome.ran) expectTypeOf(outcome.result).toEqualTypeOf<number>();
    else expectTypeOf(outcome).not.toHaveProperty('result');
    expectTypeOf<RunOnceOptions['ttlMs']>().toEqualTypeOf<number | undefined>();
  });

  it("runCoordinator() is node-cron's RunCoordinator, without holdfast depending on node-cron", () => {
    expectTypeOf(locks.runCoordinator()).toEqualTypeOf<RunCoordinatorLike>();
    expectTypeOf<RunCoordinatorLike>().toMatchTypeOf<RunCoordinator>();
  });
});
