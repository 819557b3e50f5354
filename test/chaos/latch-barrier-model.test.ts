import fc from 'fast-check';
import { BarrierBrokenError, LockClient, type Barrier, type CountDownLatch } from '@holdfast/core';
import { uniqueName, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useModelRedis } from '@holdfast/test-utils/models';
import { FULL } from './sizes.js';

/**
 * Model-based tests of the count-down latch and the barrier on real Redis:
 * random programs over three clients, checked call by call against a small
 * reference model. Latch: trySetCount / countDown / count / waits started
 * (none returns while the model's count is above 0, every one returns once it
 * reaches 0). Barrier: arrivals / a waiting party aborted / state: every trip
 * lets exactly `parties` arrivals through with the model's generation, an
 * abort rejects every other waiting party with BarrierBrokenError, and no
 * party is let through early.
 */

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? (FULL ? 200 : 15));
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_127);
const SETTLE_MS = 10_000;

interface Pending<T> {
  readonly promise: Promise<T>;
  settled: boolean;
}

function track<T>(promise: Promise<T>): Pending<T> {
  const pending: Pending<T> = { promise, settled: false };
  promise.then(
    () => (pending.settled = true),
    () => (pending.settled = true),
  );
  return pending;
}

/** Resolves with `promise`'s outcome, or fails the run when it does not settle in SETTLE_MS. */
function settles<T>(promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('did not settle')), SETTLE_MS)));
  return Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), timeout]).finally(() => clearTimeout(timer));
}

// ---- latch ----

class LatchModel {
  count = 0;
}

interface LatchReal {
  latches: CountDownLatch[];
  waits: Pending<void>[];
}

type LatchCmd = fc.AsyncCommand<LatchModel, LatchReal>;

/** After every command: no wait returned while the count is above 0; at 0, every one returns. */
async function checkWaits(model: LatchModel, real: LatchReal): Promise<void> {
  if (model.count > 0) {
    expect(real.waits.filter((w) => w.settled)).toEqual([]);
    return;
  }
  for (const wait of real.waits.splice(0)) expect(await settles(wait.promise)).toEqual({ value: undefined });
}

const latchCommands = [
  fc.tuple(fc.nat(2), fc.integer({ min: 1, max: 4 })).map(
    ([client, n]): LatchCmd => ({
      check: () => true,
      async run(model, real) {
        const set = await real.latches[client]!.trySetCount(n);
        expect(set).toBe(model.count === 0);
        if (set) model.count = n;
        await checkWaits(model, real);
      },
      toString: () => `trySetCount(${client}, ${n})`,
    }),
  ),
  fc.nat(2).map(
    (client): LatchCmd => ({
      check: () => true,
      async run(model, real) {
        model.count = Math.max(0, model.count - 1);
        expect(await real.latches[client]!.countDown()).toBe(model.count);
        await checkWaits(model, real);
      },
      toString: () => `countDown(${client})`,
    }),
  ),
  fc.nat(2).map(
    (client): LatchCmd => ({
      check: () => true,
      async run(model, real) {
        expect(await real.latches[client]!.count()).toBe(model.count);
      },
      toString: () => `count(${client})`,
    }),
  ),
  fc.nat(2).map(
    (client): LatchCmd => ({
      check: () => true,
      async run(model, real) {
        real.waits.push(track(real.latches[client]!.wait({ waitMs: 60_000 })));
        await checkWaits(model, real);
      },
      toString: () => `wait(${client})`,
    }),
  ),
];

// ---- barrier ----

class BarrierModel {
  generation = 0;
  /** Waiting arrivals, by id. */
  arrived: number[] = [];
  constructor(readonly parties: number) {}
}

interface Arrival {
  readonly pending: Pending<{ generation: number }>;
  readonly controller: AbortController;
}

interface BarrierReal {
  barriers: Barrier[];
  observer: Redis;
  arrivals: Map<number, Arrival>;
  nextId: number;
}

type BarrierCmd = fc.AsyncCommand<BarrierModel, BarrierReal>;

const barrierCommands = [
  fc.nat(2).map(
    (client): BarrierCmd => ({
      check: () => true,
      async run(model, real) {
        const id = real.nextId++;
        const controller = new AbortController();
        const promise = real.barriers[client]!.arrive({ signal: controller.signal, leaseMs: 60_000 });
        real.arrivals.set(id, { pending: track(promise), controller });
        model.arrived.push(id);
        if (model.arrived.length < model.parties) {
          // Counted on the server before the next command; nobody let through early.
          await waitFor(async () => (await real.observer.zcount(real.barriers[0]!.keys.parties, '-inf', '(inf')) === model.arrived.length, { timeoutMs: SETTLE_MS });
          for (const waiting of model.arrived) expect(real.arrivals.get(waiting)!.pending.settled).toBe(false);
          return;
        }
        for (const tripped of model.arrived.splice(0)) {
          expect(await settles(real.arrivals.get(tripped)!.pending.promise)).toEqual({ value: { generation: model.generation } });
          real.arrivals.delete(tripped);
        }
        model.generation++;
      },
      toString: () => `arrive(${client})`,
    }),
  ),
  fc.nat(9).map(
    (k): BarrierCmd => ({
      check: (model) => model.arrived.length > 0,
      async run(model, real) {
        const victim = model.arrived[k % model.arrived.length]!;
        const reason = new Error(`abort ${victim}`);
        real.arrivals.get(victim)!.controller.abort(reason);
        for (const id of model.arrived.splice(0)) {
          const outcome = await settles(real.arrivals.get(id)!.pending.promise);
          real.arrivals.delete(id);
          if (id === victim) {
            expect(outcome).toEqual({ error: reason });
          } else {
            expect(outcome.error).toBeInstanceOf(BarrierBrokenError);
            expect([(outcome.error as BarrierBrokenError).reason, (outcome.error as BarrierBrokenError).generation]).toEqual(['aborted', model.generation]);
          }
        }
      },
      toString: () => `abort(${k})`,
    }),
  ),
  fc.nat(2).map(
    (client): BarrierCmd => ({
      check: () => true,
      async run(model, real) {
        expect(await real.barriers[client]!.state()).toEqual({ parties: model.parties, generation: model.generation, waiting: model.arrived.length });
      },
      toString: () => `state(${client})`,
    }),
  ),
];

describe('latch and barrier against a reference model', () => {
  const redis = useModelRedis();

  it('latch: counts, refusals and waits as the model says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(latchCommands, { maxCommands: 30 }), async (cmds) => {
        const prefix = uniqueName('ml');
        const clients = redis.clients.map((r) => new LockClient(r, { prefix }));
        const real: LatchReal = { latches: clients.map((c) => c.countDownLatch('m')), waits: [] };
        try {
          await fc.asyncModelRun(() => ({ model: new LatchModel(), real }), cmds);
        } finally {
          // Deleted, the latch lets its waiters through: none is left subscribing at close().
          await real.latches[0]!.delete();
          await Promise.allSettled(real.waits.map((w) => w.promise));
          await Promise.all(clients.map((c) => c.close()));
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  }, 120_000);

  it('barrier: trips, generations and breaks as the model says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 4 }), fc.commands(barrierCommands, { maxCommands: 30 }), async (parties, cmds) => {
        const prefix = uniqueName('mb');
        const clients = redis.clients.map((r) => new LockClient(r, { prefix }));
        const real: BarrierReal = { barriers: clients.map((c) => c.barrier('m', { parties })), observer: redis.observer, arrivals: new Map(), nextId: 0 };
        try {
          await fc.asyncModelRun(() => ({ model: new BarrierModel(parties), real }), cmds);
        } finally {
          for (const arrival of real.arrivals.values()) arrival.controller.abort(new Error('run over'));
          await Promise.allSettled([...real.arrivals.values()].map((a) => a.pending.promise));
          await Promise.all(clients.map((c) => c.close()));
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  }, 120_000);
});
