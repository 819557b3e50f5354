import fc from 'fast-check';
import { ClientClosedError, LockClient, type LostEvent, type RunCoordinatorLike } from '@holdfast/core';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/**
 * Model-based test of run-once claims on real Redis: random programs of runOnce (succeeding or
 * throwing), node-cron coordinator calls (shouldRun, onComplete), bursts of concurrent runOnce from
 * every client, a claim's ttl running out (its key deleted: long ttls keep time out of the test) and
 * close(), checked call by call against a model of which keys are claimed and which claims are
 * running: the same winners and skips, the claim keys in Redis exactly the model's, tokens strictly
 * increasing, and a running claim reported `lost` only by close().
 */

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? 25);
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_127);
const CLIENTS = 3;
const KEYS = ['a', 'b', 'c'] as const;
const TTL_MS = 60_000;

interface Model {
  /** Keys whose claim is in Redis. */
  claimed: Set<string>;
  /** Keys whose claim a coordinator renews (shouldRun won, onComplete not called yet), by client. */
  running: Map<string, number>;
  closed: Set<number>;
}

interface Real {
  clients: LockClient[];
  coordinators: RunCoordinatorLike[];
  admin: Redis;
  prefix: string;
  lastToken: number;
  lost: { client: number; event: LostEvent }[];
  released: string[];
}

type Cmd = fc.AsyncCommand<Model, Real>;

function failure(): Error {
  return new Error('job failed');
}

class RunOnce implements Cmd {
  constructor(readonly client: number, readonly key: string, readonly throws: boolean) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    let calls = 0;
    const error = failure();
    const call = real.clients[this.client]!.runOnce(this.key, ({ token }) => {
      calls++;
      expect(token).toBeGreaterThan(real.lastToken);
      real.lastToken = token;
      if (this.throws) throw error;
      return 'done';
    }, { ttlMs: TTL_MS });
    if (model.closed.has(this.client)) {
      await expect(call).rejects.toBeInstanceOf(ClientClosedError);
      return;
    }
    if (model.claimed.has(this.key)) {
      expect(await call).toEqual({ ran: false });
      expect(calls).toBe(0);
      return;
    }
    if (this.throws) await expect(call).rejects.toBe(error);
    else expect(await call).toEqual({ ran: true, result: 'done' });
    expect(calls).toBe(1);
    expect(real.released.splice(0)).toEqual([this.key]);
    model.claimed.add(this.key);
  }
  toString = () => `runOnce(${this.client}, ${this.key}${this.throws ? ', throws' : ''})`;
}

class ShouldRun implements Cmd {
  constructor(readonly client: number, readonly key: string) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const call = real.coordinators[this.client]!.shouldRun(this.key, TTL_MS);
    if (model.closed.has(this.client)) {
      await expect(call).rejects.toBeInstanceOf(ClientClosedError);
      return;
    }
    expect(await call).toBe(!model.claimed.has(this.key));
    if (model.claimed.has(this.key)) return;
    model.claimed.add(this.key);
    model.running.set(this.key, this.client);
  }
  toString = () => `shouldRun(${this.client}, ${this.key})`;
}

class OnComplete implements Cmd {
  constructor(readonly client: number, readonly key: string) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    real.coordinators[this.client]!.onComplete(this.key);
    // Only the coordinator renewing the claim stops something; the claim itself stays.
    if (model.running.get(this.key) === this.client) {
      model.running.delete(this.key);
      expect(real.released.splice(0)).toEqual(model.closed.has(this.client) ? [] : [this.key]);
    }
    expect(real.released).toEqual([]);
  }
  toString = () => `onComplete(${this.client}, ${this.key})`;
}

class Burst implements Cmd {
  constructor(readonly key: string) {}
  check = (model: Readonly<Model>) => model.closed.size < CLIENTS;
  async run(model: Model, real: Real): Promise<void> {
    const open = real.clients.filter((_, i) => !model.closed.has(i));
    let calls = 0;
    const outcomes = await Promise.all(open.map((c) => c.runOnce(this.key, () => ++calls, { ttlMs: TTL_MS })));
    const expected = model.claimed.has(this.key) ? 0 : 1;
    expect(calls).toBe(expected);
    expect(outcomes.filter((o) => o.ran)).toHaveLength(expected);
    expect(real.released.splice(0)).toEqual(expected ? [this.key] : []);
    model.claimed.add(this.key);
  }
  toString = () => `burst(${this.key})`;
}

/** The claim's ttl ran out after its work ended (its key deleted, standing for the expiry). */
class Expire implements Cmd {
  constructor(readonly key: string) {}
  check = (model: Readonly<Model>) => model.claimed.has(this.key) && !model.running.has(this.key);
  async run(model: Model, real: Real): Promise<void> {
    const [key] = await real.admin.keys(`${real.prefix}:{*}:once:${this.key}`);
    expect(await real.admin.del(key!)).toBe(1);
    model.claimed.delete(this.key);
  }
  toString = () => `expire(${this.key})`;
}

class Close implements Cmd {
  constructor(readonly client: number) {}
  check = (model: Readonly<Model>) => !model.closed.has(this.client);
  async run(model: Model, real: Real): Promise<void> {
    await real.clients[this.client]!.close();
    model.closed.add(this.client);
    const ended = [...model.running].filter(([, c]) => c === this.client).map(([key]) => key);
    const lost = real.lost.splice(0);
    expect(lost.map(({ client, event }) => [client, event.name, event.reason, event.kind]).sort()).toEqual(
      ended.map((key) => [this.client, key, 'closed', 'run-once']).sort(),
    );
    // The coordinator still knows the key until onComplete, which then stops nothing.
  }
  toString = () => `close(${this.client})`;
}

const client = fc.integer({ min: 0, max: CLIENTS - 1 });
const key = fc.constantFrom(...KEYS);
const commands = fc.commands(
  [
    fc.tuple(client, key, fc.boolean()).map(([c, k, t]) => new RunOnce(c, k, t)),
    fc.tuple(client, key).map(([c, k]) => new ShouldRun(c, k)),
    fc.tuple(client, key).map(([c, k]) => new OnComplete(c, k)),
    key.map((k) => new Burst(k)),
    key.map((k) => new Expire(k)),
    client.map((c) => new Close(c)),
  ],
  { maxCommands: 30 },
);

describe('runOnce model', () => {
  const fx = useRedis();
  const admins: Redis[] = [];
  afterAll(() => {
    for (const admin of admins) admin.disconnect();
  });

  it('agrees with the model over random programs', async () => {
    const admin = await fx.redis();
    admins.push(admin);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const prefix = `${fx.prefix}m${run++}`;
        const redis = await fx.redis();
        const clients = Array.from({ length: CLIENTS }, () => new LockClient(redis, { prefix }));
        const real: Real = { clients, coordinators: clients.map((c) => c.runCoordinator()), admin, prefix, lastToken: 0, lost: [], released: [] };
        clients.forEach((c, i) => {
          c.on('lost', (event) => real.lost.push({ client: i, event }));
          c.on('released', (event) => real.released.push(event.name));
        });
        const model: Model = { claimed: new Set(), running: new Map(), closed: new Set() };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          // The claim keys in Redis are exactly the model's, and no claim was lost but by close().
          const keys = await admin.keys(`${prefix}:{*}:once:*`);
          expect(keys.map((k) => k.slice(k.lastIndexOf(':') + 1)).sort()).toEqual([...model.claimed].sort());
          expect(real.lost).toEqual([]);
        } finally {
          await Promise.all(clients.map((c) => c.close()));
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  }, 120_000);
});
