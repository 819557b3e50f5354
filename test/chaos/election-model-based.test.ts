import fc from 'fast-check';
import { LockClient, type Election, type Term } from '@holdfast/core';
import { uniqueName, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { ElectionModel, useModelRedis } from '@holdfast/test-utils/models';

/**
 * Model-based test of the election on real Redis: random programs of
 * campaign (from one of three clients) / resign / proclaim / a waiting
 * candidate giving up / leader(), checked call by call against
 * ElectionModel: the same leader and value, the same candidates waiting in
 * the same order (each resignation elects exactly the model's next), epochs
 * strictly increasing, and nothing left in Redis once everyone is done.
 */

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? 60);
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_127);

interface Candidate {
  readonly campaign: Promise<Term>;
  readonly controller: AbortController;
}

interface Real {
  readonly elections: Election[];
  readonly observer: Redis;
  readonly candidates: Map<number, Candidate>;
  term: Term | undefined;
  lastEpoch: number;
}

type Cmd = fc.AsyncCommand<ElectionModel, Real>;

async function queued(real: Real): Promise<number> {
  return real.observer.llen(real.elections[0]!.keys.queue);
}

/** The term the model says was just elected: its campaign resolves, with a greater epoch and its value. */
async function elected(model: ElectionModel, real: Real, id: number): Promise<void> {
  const term = await real.candidates.get(id)!.campaign;
  real.candidates.delete(id);
  expect(term.epoch).toBeGreaterThan(real.lastEpoch);
  expect(term.value).toBe(model.leader!.value);
  real.lastEpoch = term.epoch;
  real.term = term;
}

class Campaign implements Cmd {
  constructor(readonly client: number) {}
  check = () => true;
  async run(model: ElectionModel, real: Real): Promise<void> {
    const value = `v${this.client}:${real.candidates.size + real.lastEpoch}`;
    const controller = new AbortController();
    const campaign = real.elections[this.client]!.campaign({ value, signal: controller.signal });
    campaign.catch(() => undefined);
    const id = model.campaign(value);
    real.candidates.set(id, { campaign, controller });
    if (model.leader?.id === id) await elected(model, real, id);
    else await waitFor(async () => (await queued(real)) === model.queue.length, { timeoutMs: 10_000 });
  }
  toString = () => `campaign(client ${this.client})`;
}

class Resign implements Cmd {
  check = (model: Readonly<ElectionModel>) => model.leader !== null;
  async run(model: ElectionModel, real: Real): Promise<void> {
    await real.term!.resign();
    expect(real.term!.isLeader).toBe(false);
    real.term = undefined;
    const next = model.resign();
    if (next !== undefined) await elected(model, real, next);
    expect(await queued(real)).toBe(model.queue.length);
  }
  toString = () => 'resign()';
}

class Proclaim implements Cmd {
  constructor(readonly value: string) {}
  check = (model: Readonly<ElectionModel>) => model.leader !== null;
  async run(model: ElectionModel, real: Real): Promise<void> {
    await real.term!.proclaim(this.value);
    model.proclaim(this.value);
  }
  toString = () => `proclaim(${JSON.stringify(this.value)})`;
}

class GiveUp implements Cmd {
  constructor(readonly k: number) {}
  check = (model: Readonly<ElectionModel>) => model.queue.length > 0;
  async run(model: ElectionModel, real: Real): Promise<void> {
    const { id } = model.queue[this.k % model.queue.length]!;
    const candidate = real.candidates.get(id)!;
    const reason = new Error('gave up');
    candidate.controller.abort(reason);
    await expect(candidate.campaign).rejects.toBe(reason);
    real.candidates.delete(id);
    model.giveUp(id);
    // The withdrawal is sent before the rejection but not waited for: another connection sees
    // the queue without this candidate once it has run.
    await waitFor(async () => (await queued(real)) === model.queue.length);
  }
  toString = () => `giveUp(#${this.k})`;
}

class ReadLeader implements Cmd {
  constructor(readonly client: number) {}
  check = () => true;
  async run(model: ElectionModel, real: Real): Promise<void> {
    const leader = await real.elections[this.client]!.leader();
    expect(leader).toEqual(model.leader === null ? null : { value: model.leader.value, epoch: real.lastEpoch });
  }
  toString = () => `leader(client ${this.client})`;
}

const commands = [
  fc.nat({ max: 2 }).map((c) => new Campaign(c)),
  fc.nat({ max: 2 }).map((c) => new Campaign(c)),
  fc.constant(new Resign()),
  fc.constantFrom('a', 'b:9090', '').map((v) => new Proclaim(v)),
  fc.nat({ max: 5 }).map((k) => new GiveUp(k)),
  fc.nat({ max: 2 }).map((c) => new ReadLeader(c)),
];

describe('model-based: Election against the reference model', () => {
  const redis = useModelRedis();

  it('elects, queues, hands over and forgets candidates as the model says, epochs increasing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 20 }), async (cmds) => {
        const clients = redis.clients.map((r) => new LockClient(r, { prefix: 'elmodel', leaseMs: 60_000 }));
        const name = uniqueName('election');
        const real: Real = { elections: clients.map((c) => c.election(name)), observer: redis.observer, candidates: new Map(), term: undefined, lastEpoch: 0 };
        try {
          await fc.asyncModelRun(() => ({ model: new ElectionModel(), real }), cmds);
        } finally {
          for (const { controller } of real.candidates.values()) controller.abort(new Error('done'));
          await Promise.allSettled([...real.candidates.values()].map((c) => c.campaign));
          await real.term?.resign();
          await Promise.all(clients.map((c) => c.close()));
        }
        expect(await redis.observer.keys(`elmodel:{*}:el?:${name}`)).toEqual([]);
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  }, 60_000);
});
