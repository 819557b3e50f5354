import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uniqueName } from '@holdfast/test-utils';
import { formatProgram, LOCK_ORDER, normalizeProgram, type End, type Program, type Step, type Via, addTally, runProgram, useModelRedis } from '@holdfast/test-utils/models';
import { saveReport } from './report.js';
import { FULL, TIMEOUT_MS } from './sizes.js';

/**
 * Model-based tests of @holdfast/core on real Redis: random programs of
 * acquire / tryAcquire / withLock (nested, re-entered, across sibling tasks)
 * / release / extend / abort / close / expiry / event-loop stalls over 2–3
 * LockClients, with fast-check's scheduler choosing the interleaving, checked
 * step by step against the reference model (@holdfast/test-utils/models: test/src/model/reference-model.ts).
 *
 * `pnpm test` runs a bounded number of programs from a fixed seed;
 * `pnpm chaos` (HOLDFAST_CHAOS=full) runs many more. A failure prints the
 * seed and path (replay with HOLDFAST_MODEL_SEED / HOLDFAST_MODEL_PATH), the
 * shrunk program and the model's trace.
 */

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? (FULL ? 400 : 25));
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_123);
const PATH = process.env.HOLDFAST_MODEL_PATH;

const VIAS: readonly Via[] = ['acquire', 'acquire', 'withLock', 'withLock', 'withLock', 'try'];
const ENDS: readonly End[] = ['release', 'release', 'release', 'extend', 'releaseTwice', 'releaseExtend', 'throw', 'expire'];

/**
 * Steps at nesting `depth`. Locks are drawn freely and fixed by
 * normalizeProgram() (which keeps shrinking simple): a nested section takes a
 * lock it already holds (re-entry, or waiting for itself) or one after every
 * lock it holds, so chains never wait for each other in a cycle.
 */
function stepsArb(depth: number, withClose: boolean, maxLength: number): fc.Arbitrary<Step[]> {
  return fc.array(stepArb(depth, withClose), { minLength: 1, maxLength });
}

function stepArb(depth: number, withClose: boolean): fc.Arbitrary<Step> {
  const section = fc.record({
    op: fc.constant('section' as const),
    via: fc.constantFrom(...VIAS),
    client: fc.nat({ max: 2 }),
    lock: fc.constantFrom(...LOCK_ORDER),
    short: fc.constantFrom(false, false, false, false, true),
    abort: fc.constantFrom(false, false, false, false, false, true),
    end: fc.constantFrom(...ENDS),
    body: depth > 0 ? fc.oneof(fc.constant<Step[]>([]), stepsArb(depth - 1, withClose, 2)) : fc.constant<Step[]>([]),
  });
  const stall = fc.record({ op: fc.constant('stall' as const), ms: fc.constantFrom(50, 350) });
  const options: fc.WeightedArbitrary<Step>[] = [
    { weight: 12, arbitrary: section },
    { weight: 1, arbitrary: stall },
  ];
  if (withClose) {
    const close = fc.record({ op: fc.constant('close' as const), client: fc.nat({ max: 2 }), release: fc.boolean() });
    options.push({ weight: 2, arbitrary: close });
  }
  if (depth > 0) {
    const spawn = fc.record({
      op: fc.constant('spawn' as const),
      tasks: fc.array(stepsArb(depth - 1, withClose, 2), { minLength: 2, maxLength: 3 }),
    });
    options.push({ weight: 2, arbitrary: spawn });
  }
  return fc.oneof(...options);
}

function programArb(withClose: boolean): fc.Arbitrary<Program> {
  return fc
    .record({ clients: fc.constantFrom(2, 3), tasks: fc.array(stepsArb(2, withClose, 3), { minLength: 2, maxLength: 3 }) })
    .map(normalizeProgram);
}

describe('model-based: LockClient against the reference model', () => {
  const redis = useModelRedis();

  async function check(withClose: boolean, seed: number): Promise<number> {
    let runs = 0;
    const tally = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(programArb(withClose), fc.scheduler(), async (program, s) => {
        runs++;
        const { model } = await runProgram(program, redis, s, uniqueName('model'), (all) => s.waitFor(all));
        addTally(tally, model.tally);
        if (model.violations.length > 0) {
          throw new Error(
            `${model.violations.length} violation(s):\n  ${model.violations.join('\n  ')}\n` +
              `program:\n${formatProgram(program)}\n` +
              `trace (last 40):\n  ${model.trace.slice(-40).join('\n  ')}`,
          );
        }
      }),
      { numRuns: NUM_RUNS, seed, path: PATH, verbose: 1 },
    );
    // What the runs exercised, so a generator change that stops reaching a case shows up.
    console.log(
      `model-based (${withClose ? 'with' : 'without'} close), ${runs} runs:\n` +
        [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `  ${k}: ${n}`).join('\n'),
    );
    const n = (key: string) => tally.get(key) ?? 0;
    saveReport({
      id: withClose ? '20-model-based-close' : '19-model-based',
      fault: `random programs, fast-check scheduler, event-loop stalls${withClose ? ', close() / close({ release: true })' : ''}`,
      expected: 'no two owners, tokens increasing, exact hold counts, the typed error the model names for every call',
      metric: 'programs / sections entered / re-entries / violations',
      result: `${runs} (seed ${seed}) / ${n('section entered')} / ${n('section re-entered by its owner')} / 0`,
    });
    return runs;
  }

  it(
    `programs of acquire / tryAcquire / withLock / release / extend / abort / expiry (${NUM_RUNS} runs, seed ${SEED})`,
    async () => {
      expect(await check(false, SEED)).toBeGreaterThanOrEqual(NUM_RUNS);
    },
    FULL ? TIMEOUT_MS : 240_000,
  );

  it(
    `the same with close() and close({ release: true }) at scheduler-chosen moments (${NUM_RUNS} runs, seed ${SEED + 1})`,
    async () => {
      expect(await check(true, SEED + 1)).toBeGreaterThanOrEqual(NUM_RUNS);
    },
    FULL ? TIMEOUT_MS : 240_000,
  );
});
