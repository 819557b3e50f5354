import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { inboxScripts } from '../../src/inbox/inbox-calls.js';
import { inboxKeys, type InboxKeys } from '../../src/inbox/inbox-keys.js';
import { useRedis } from '../helpers.js';

/**
 * Model-based test of an inbox key's scripts on real Redis: random programs of posts (claiming
 * or not), the processor's next call (removing what it was handed, then handing more or
 * releasing), a post racing that call (both sent at once: either order must be one of the two
 * the model allows), a stale processor's late call, a lease running out, and recovery. After
 * each step Redis holds exactly the model's queue and lease, and the invariant of "no stranded
 * message" holds: a non-empty queue has a processor, or its index says nobody processes it
 * (so recover() finds it); an empty one has neither lease, index record nor attempts.
 */

const NUM_RUNS = Number(process.env.HOLDFAST_MODEL_RUNS ?? 30);
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_202);
const LEASE_MS = 60_000;

interface Model {
  /** Message bodies pending, oldest first. */
  queue: string[];
  /** The processor: its owner, token, and the messages last handed to it (their seqs). */
  lease: { owner: string; token: number; handed: { body: string; seq: number }[] } | undefined;
  /** Processors that lost the key (their lease ran out), with what they were handed. */
  stale: { owner: string; token: number; handed: { body: string; seq: number }[] }[];
  posted: number;
  owners: number;
}

interface Real {
  redis: Redis;
  keys: InboxKeys;
  lastToken: number;
  /** Checks Redis against the model (after every command). */
  verify: (model: Model) => Promise<void>;
}

type Cmd = fc.AsyncCommand<Model, Real>;

const evalScript = (redis: Redis, script: { source: string }, keys: string[], args: (string | number)[]) =>
  redis.eval(script.source, keys.length, ...keys, ...args) as Promise<unknown>;

function post(real: Real, body: string, owner: string): Promise<unknown> {
  const { keys } = real;
  return evalScript(real.redis, inboxScripts.post, [keys.queue, keys.lease, keys.index, keys.fence, keys.attempts], [body, 1000, owner, LEASE_MS, 'k']);
}

function next(real: Real, owner: string, token: number, lastSeq: number, most: number): Promise<unknown> {
  const { keys } = real;
  return evalScript(real.redis, inboxScripts.next, [keys.queue, keys.lease, keys.attempts, keys.index], [owner, token, lastSeq, most, 0, 100, 0, 'k', keys.channel]);
}

/** Applies a next reply to the model: removes what was handled, then release or hand-out. */
function applyNext(model: Model, reply: unknown, lastSeq: number): void {
  const lease = model.lease!;
  const removed = lease.handed.filter((m) => m.seq <= lastSeq).length;
  model.queue.splice(0, removed);
  const r = reply as unknown[];
  if (r[0] === 0) {
    model.lease = undefined;
    return;
  }
  expect(r[0]).toBe(1);
  const n = r[2] as number;
  const handed: { body: string; seq: number }[] = [];
  for (let i = 0; i < n; i++) handed.push({ seq: r[3 + 5 * i] as number, body: r[7 + 5 * i] as string });
  expect(handed.map((m) => m.body)).toEqual(model.queue.slice(0, n));
  lease.handed = handed;
}

class Post implements Cmd {
  constructor(readonly claim: boolean) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await this.step(model, real);
    await real.verify(model);
  }
  async step(model: Model, real: Real): Promise<void> {
    const body = `m${model.posted++}`;
    const owner = this.claim ? `o${model.owners++}` : '';
    const [position, , token] = (await post(real, body, owner)) as number[];
    model.queue.push(body);
    expect(position).toBe(model.queue.length);
    if (this.claim && !model.lease) {
      expect(token).toBeGreaterThan(real.lastToken);
      real.lastToken = token!;
      model.lease = { owner, token: token!, handed: [] };
    } else {
      expect(token).toBe(0);
    }
  }
  toString = () => `Post(${this.claim})`;
}

class Next implements Cmd {
  constructor(readonly handled: boolean, readonly most: number) {}
  check = (model: Readonly<Model>) => model.lease !== undefined;
  async run(model: Model, real: Real): Promise<void> {
    await this.step(model, real);
    await real.verify(model);
  }
  async step(model: Model, real: Real): Promise<void> {
    const lease = model.lease!;
    const lastSeq = this.handled && lease.handed.length > 0 ? lease.handed[lease.handed.length - 1]!.seq : 0;
    applyNext(model, await next(real, lease.owner, lease.token, lastSeq, this.most), lastSeq);
  }
  toString = () => `Next(${this.handled}, ${this.most})`;
}

/** The processor's call and a claiming post, sent at once: the release must not strand the post. */
class PostRacingRelease implements Cmd {
  check = (model: Readonly<Model>) => model.lease !== undefined;
  async run(model: Model, real: Real): Promise<void> {
    await this.step(model, real);
    await real.verify(model);
  }
  async step(model: Model, real: Real): Promise<void> {
    const lease = model.lease!;
    const lastSeq = lease.handed.length > 0 ? lease.handed[lease.handed.length - 1]!.seq : 0;
    const body = `m${model.posted++}`;
    const owner = `o${model.owners++}`;
    const [nextReply, postReply] = await Promise.all([next(real, lease.owner, lease.token, lastSeq, 1), post(real, body, owner)]);
    const [, , token] = postReply as number[];
    if (token! > 0) {
      // The release ran first: the queue was empty then, and the post claimed the key.
      expect((nextReply as unknown[])[0]).toBe(0);
      applyNext(model, nextReply, lastSeq);
      expect(model.queue).toEqual([]);
      model.queue.push(body);
      expect(token).toBeGreaterThan(real.lastToken);
      real.lastToken = token!;
      model.lease = { owner, token: token!, handed: [] };
    } else {
      // The post ran first: the processor keeps the key and is handed the head.
      model.queue.push(body);
      applyNext(model, nextReply, lastSeq);
      expect(model.lease).toBeDefined();
    }
  }
  toString = () => 'PostRacingRelease';
}

/** The processor's lease runs out (deleted, and the index told, as an expiry leaves it). */
class Expire implements Cmd {
  check = (model: Readonly<Model>) => model.lease !== undefined;
  async run(model: Model, real: Real): Promise<void> {
    await this.step(model, real);
    await real.verify(model);
  }
  async step(model: Model, real: Real): Promise<void> {
    await real.redis.del(real.keys.lease);
    await real.redis.zadd(real.keys.index, 0, 'k');
    model.stale.push(model.lease!);
    model.lease = undefined;
  }
  toString = () => 'Expire';
}

/** A processor that lost the key calls next late, with what it handled: refused, nothing changes. */
class StaleNext implements Cmd {
  check = (model: Readonly<Model>) => model.stale.length > 0;
  async run(model: Model, real: Real): Promise<void> {
    await this.step(model, real);
    await real.verify(model);
  }
  async step(model: Model, real: Real): Promise<void> {
    const stale = model.stale[model.stale.length - 1]!;
    const lastSeq = stale.handed.length > 0 ? stale.handed[stale.handed.length - 1]!.seq : 0;
    expect(await next(real, stale.owner, stale.token, lastSeq, 1)).toEqual([-1]);
  }
  toString = () => 'StaleNext';
}

class Recover implements Cmd {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    await this.step(model, real);
    await real.verify(model);
  }
  async step(model: Model, real: Real): Promise<void> {
    const owner = `o${model.owners++}`;
    const { keys } = real;
    const reply = (await evalScript(real.redis, inboxScripts.claim, [keys.queue, keys.lease, keys.index, keys.fence], [owner, LEASE_MS, 'k'])) as number[];
    if (model.queue.length > 0 && !model.lease) {
      expect(reply[0]).toBe(1);
      expect(reply[1]).toBeGreaterThan(real.lastToken);
      real.lastToken = reply[1]!;
      model.lease = { owner, token: reply[1]!, handed: [] };
    } else {
      expect(reply).toEqual([0]);
    }
  }
  toString = () => 'Recover';
}

const commands = fc.commands(
  [
    fc.boolean().map((claim) => new Post(claim)),
    fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3 })).map(([handled, most]) => new Next(handled, most)),
    fc.constant(new PostRacingRelease()),
    fc.constant(new Expire()),
    fc.constant(new StaleNext()),
    fc.constant(new Recover()),
  ],
  { maxCommands: 40 },
);

describe('inbox scripts against a model', () => {
  const fx = useRedis();

  it('never strands a message: the release and a post, in either order, leave it processed or claimable', async () => {
    const redis = await fx.redis();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        const keys = inboxKeys(`${fx.prefix}m${run++}`, 'model', 'k');
        const model: Model = { queue: [], lease: undefined, stale: [], posted: 0, owners: 0 };
        const verify = async (m: Model) => {
          const queue = (await redis.lrange(keys.queue, 0, -1)).map((entry) => entry.slice(entry.indexOf('|', entry.indexOf('|') + 1) + 1));
          expect(queue).toEqual(m.queue);
          expect(Number((await redis.hget(keys.attempts, 'n')) ?? 0)).toBe(m.queue.length);
          const lease = await redis.get(keys.lease);
          expect(lease).toBe(m.lease ? `i1|${m.lease.token}|${m.lease.owner}` : null);
          const score = await redis.zscore(keys.index, 'k');
          if (m.queue.length === 0) {
            expect([score, await redis.exists(keys.attempts)]).toEqual([null, 0]);
          } else if (!m.lease) {
            // Nobody processes it: the index says so, and recover() finds it.
            expect(score).toBe('0');
          } else {
            expect(Number(score)).toBeGreaterThan(0);
          }
        };
        const real: Real = { redis, keys, lastToken: 0, verify };
        await fc.asyncModelRun(() => ({ model, real }), cmds);
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
  }, 120_000);
});
