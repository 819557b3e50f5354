import { LockClient, LockLostError, LockNotHeldError, MultiLockReleaseError, type Lease, type MultiLease } from '@holdfast/core';
import { uniqueName, differentSlotNames, sameSlotNames } from '@holdfast/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useModelRedis } from '@holdfast/test-utils/models';
import { FULL } from './sizes.js';

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? (FULL ? 400 : 40));
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_123);

/**
 * Model-based test of multi-locks against a small reference model: random
 * programs of multi-lock and plain tryAcquire (names drawn from a pool where
 * two share a hash slot and the others do not, duplicates included), releases
 * and force-releases, run against real Redis. The model knows which lease holds
 * each name; after every step each name's holder in Redis (its fencing token)
 * must be the model's, a refused tryAcquire must have changed nothing, tokens
 * only grow, a lost part aborts its lease's one signal, and a release reports
 * exactly the parts lost before it.
 */

const POOL = [...sameSlotNames('model-multi', 2), ...differentSlotNames('model-multi-x', 2)];

type Op =
  | { op: 'multi'; client: number; names: string[] }
  | { op: 'plain'; client: number; name: string }
  | { op: 'release'; index: number }
  | { op: 'force'; index: number; part: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('multi' as const), client: fc.nat(1), names: fc.array(fc.constantFrom(...POOL), { minLength: 1, maxLength: 5 }) }),
  fc.record({ op: fc.constant('plain' as const), client: fc.nat(1), name: fc.constantFrom(...POOL) }),
  fc.record({ op: fc.constant('release' as const), index: fc.nat(7) }),
  fc.record({ op: fc.constant('force' as const), index: fc.nat(7), part: fc.nat(4) }),
);

/** A lease the program holds, as the model sees it. */
interface Held {
  readonly client: number;
  readonly names: readonly string[];
  readonly lease: MultiLease | Lease;
  readonly tokens: ReadonlyMap<string, number>;
  readonly lost: Set<string>;
}

describe('multi-lock model', () => {
  const redis = useModelRedis();

  it('random programs agree with the reference model', async () => {
    // What the programs reached, so a generator that stopped covering a case fails the test.
    const tally = new Map<string, number>();
    const count = (tag: string) => tally.set(tag, (tally.get(tag) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 20 }), async (ops) => {
        const prefix = uniqueName('mm');
        const clients = [0, 1].map((i) => new LockClient(redis.clients[i]!, { prefix, leaseMs: 60_000 }));
        const holder = new Map<string, Held>();
        const lastToken = new Map<string, number>();
        const live: Held[] = [];
        const check = async (step: string) => {
          for (const name of POOL) {
            const expected = holder.get(name);
            const token = await clients[0]!.lock(name).currentToken();
            expect(token, `${step}: holder of ${name}`).toBe(expected ? expected.tokens.get(name)! : null);
          }
        };
        const granted = (client: number, names: readonly string[], lease: MultiLease | Lease, tokens: ReadonlyMap<string, number>) => {
          for (const name of names) {
            expect(tokens.get(name)!, `token of ${name} grows`).toBeGreaterThan(lastToken.get(name) ?? 0);
            lastToken.set(name, tokens.get(name)!);
          }
          const held: Held = { client, names, lease, tokens, lost: new Set() };
          for (const name of names) holder.set(name, held);
          live.push(held);
        };
        try {
          for (const [i, op] of ops.entries()) {
            const step = `step ${i} ${JSON.stringify(op)}`;
            if (op.op === 'multi') {
              const names = [...new Set(op.names)];
              const free = names.every((name) => !holder.has(name));
              const lease = await clients[op.client]!.multiLock(op.names).tryAcquire();
              expect(lease !== null, step).toBe(free);
              count(lease ? 'multi granted' : 'multi refused');
              if (lease) {
                expect(lease.names, step).toEqual(names);
                granted(op.client, names, lease, lease.tokens);
              }
            } else if (op.op === 'plain') {
              const lease = await clients[op.client]!.lock(op.name).tryAcquire();
              expect(lease !== null, step).toBe(!holder.has(op.name));
              if (lease) granted(op.client, [op.name], lease, new Map([[op.name, lease.token]]));
            } else if (live.length > 0) {
              const held = live[op.index % live.length]!;
              if (op.op === 'force') {
                const name = held.names[op.part % held.names.length]!;
                if (held.lost.has(name)) continue;
                expect(await clients[held.client]!.lock(name).forceRelease(), step).toBe(true);
                held.lost.add(name);
                count('part lost');
                holder.delete(name);
                // One signal for every part, aborted by the first loss with that part's error.
                expect(held.lease.signal.aborted, step).toBe(true);
                expect(held.lease.isHeld, step).toBe(false);
                const reason = held.lease.signal.reason as LockLostError;
                expect(reason, step).toBeInstanceOf(LockLostError);
                expect(held.lost.has(reason.lockName), step).toBe(true);
              } else {
                live.splice(live.indexOf(held), 1);
                const error = await held.lease.release().then(() => undefined, (e: unknown) => e);
                if (held.lost.size === 0) {
                  expect(error, step).toBeUndefined();
                } else if ('tokens' in held.lease) {
                  expect(error, step).toBeInstanceOf(MultiLockReleaseError);
                  const partial = error as MultiLockReleaseError;
                  count('partial release');
                  expect(new Set(partial.failures.keys()), step).toEqual(held.lost);
                  expect(partial.released, step).toEqual(held.names.filter((name) => !held.lost.has(name)));
                } else {
                  expect(error, step).toBeInstanceOf(LockNotHeldError);
                }
                for (const name of held.names) if (holder.get(name) === held) holder.delete(name);
              }
            }
            await check(step);
          }
        } finally {
          await Promise.all(live.map((held) => held.lease[Symbol.asyncDispose]().catch(() => undefined)));
          await Promise.all(clients.map((client) => client.close()));
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
    for (const tag of ['multi granted', 'multi refused', 'part lost', 'partial release']) {
      expect(tally.get(tag), tag).toBeGreaterThan(0);
    }
    console.log(`multi-lock model: ${NUM_RUNS} programs, ${JSON.stringify(Object.fromEntries(tally))}`);
  }, FULL ? 1_800_000 : 120_000);
});
