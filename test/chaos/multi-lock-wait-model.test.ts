import { LockClient, LockTimeoutError, type Lease, type MultiLease } from '@holdfast/core';
import { uniqueName, differentSlotNames, sameSlotNames } from '@holdfast/test-utils';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useModelRedis } from '@holdfast/test-utils/models';
import { FULL } from './sizes.js';

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? (FULL ? 200 : 12));
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_126);

/**
 * Model-based test of multi-locks that wait, with short leases: names in
 * several hash slots (two share one), a rival holding some of them (any part,
 * later ones in the global order included) with leases of its own that it
 * releases or lets run out, and a multi-lock whose lease is shorter than the
 * rivals' holds. The reference model is the README's promise: the acquisition
 * resolves (every rival goes away well within its wait) with a lease that
 * holds every name, each with its full lease ahead, and whose release gives
 * every name back. Rules are checked as of when they can be: a part may be
 * lost after the lease was handed out (no watchdog renews it), but never before.
 */

const POOL = [...sameSlotNames('wait-model', 2), ...differentSlotNames('wait-model-x', 2)];

interface Rival {
  readonly name: string;
  readonly leaseMs: number;
  /** Released after this many ms, or left to expire. */
  readonly releaseAfterMs: number | 'expire';
}

const rivalArb: fc.Arbitrary<Rival> = fc.record({
  name: fc.constantFrom(...POOL),
  leaseMs: fc.integer({ min: 150, max: 600 }),
  releaseAfterMs: fc.oneof(fc.constant('expire' as const), fc.integer({ min: 0, max: 500 })),
});

const caseArb = fc.record({
  names: fc.uniqueArray(fc.constantFrom(...POOL), { minLength: 1, maxLength: POOL.length }),
  rivals: fc.uniqueArray(rivalArb, { maxLength: 3, selector: (rival) => rival.name }),
  leaseMs: fc.integer({ min: 150, max: 400 }),
});

describe('multi-lock model: waiting with short leases', () => {
  const redis = useModelRedis();

  it('a returned lease holds every name with its lease ahead, whatever the rivals do', async () => {
    const tally = new Map<string, number>();
    const count = (tag: string) => tally.set(tag, (tally.get(tag) ?? 0) + 1);
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ names, rivals, leaseMs }) => {
        const prefix = uniqueName('mw');
        const mine = new LockClient(redis.clients[0]!, { prefix });
        const theirs = new LockClient(redis.clients[1]!, { prefix });
        const timers: NodeJS.Timeout[] = [];
        try {
          const held: Lease[] = [];
          for (const rival of rivals) {
            const lease = await theirs.lock(rival.name).acquire({ leaseMs: rival.leaseMs });
            held.push(lease);
            if (rival.releaseAfterMs !== 'expire') {
              timers.push(setTimeout(() => void lease.release().catch(() => undefined), rival.releaseAfterMs));
            }
          }
          const contended = rivals.some((rival) => names.includes(rival.name));
          const rivalTokens = new Map(held.map((lease) => [lease.name, lease.token]));
          const lease: MultiLease = await mine.multiLock(names).acquire({ leaseMs, waitMs: 10_000 });
          // At hand-out, synchronously: every part held, nothing aborted.
          expect(lease.isHeld).toBe(true);
          expect(lease.signal.aborted).toBe(false);
          count(contended ? 'waited for a rival' : 'uncontended');
          for (const name of names) {
            if (rivalTokens.has(name)) expect(lease.tokens.get(name)!).toBeGreaterThan(rivalTokens.get(name)!);
          }
          const current = await Promise.all(names.map((name) => mine.lock(name).currentToken()));
          // Checked in Redis only while the lease still believes itself held (its lease may run
          // out after the hand-out on a loaded machine; before the hand-out it may not).
          if (lease.isHeld) {
            expect(current).toEqual(names.map((name) => lease.tokens.get(name)));
            count('held in Redis');
          }
          const released = await lease.release().then(() => true, () => false);
          expect(released || lease.signal.aborted).toBe(true);
          const left = await Promise.all(names.map((name) => mine.lock(name).currentToken()));
          if (released) expect(left.filter((token, i) => token === lease.tokens.get(names[i]!))).toEqual([]);
        } catch (error) {
          // Every rival goes away within 600 ms of a 10 s wait: a timeout breaks the promise.
          if (error instanceof LockTimeoutError) throw new Error(`timed out: ${error.message}`);
          throw error;
        } finally {
          timers.forEach(clearTimeout);
          await Promise.all([mine.close(), theirs.close()]);
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
    for (const tag of ['waited for a rival', 'held in Redis']) expect(tally.get(tag), tag).toBeGreaterThan(0);
    console.log(`multi-lock wait model: ${NUM_RUNS} cases, ${JSON.stringify(Object.fromEntries(tally))}`);
  }, FULL ? 1_800_000 : 120_000);
});
