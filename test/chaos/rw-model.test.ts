import fc from 'fast-check';
import { LockClient, type Lease } from '@holdfast/core';
import { uniqueName } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useModelRedis } from '@holdfast/test-utils/models';
import { FULL } from './sizes.js';

/**
 * Model-based test of the read-write lock on real Redis: random programs of
 * tryAcquire / withLock (nested: re-entry, downgrade, refused upgrade) /
 * release / expiry of a holder's lease on the server, over three
 * LockClients, run one step at a time and checked against a reference model
 * that predicts every outcome (lease, null, or the error's code) and the
 * token rules. Sequential on purpose: the outcome of each step is then
 * exact, where the concurrent mutex model can only bound it.
 */

const NUM_RUNS = Number(process.env.HOLDFAST_RW_MODEL_RUNS ?? (FULL ? 300 : 20));
const SEED = Number(process.env.HOLDFAST_MODEL_SEED ?? 20_261_123);
/**
 * How long a withLock step the model expects to find busy waits before
 * LockTimeoutError (nobody frees the lock meanwhile). One expected to be
 * granted may wait far longer: a slow reply on a busy machine must not
 * time it out.
 */
const BUSY_WAIT_MS = 150;
const FREE_WAIT_MS = 20_000;

type Side = 'read' | 'write';
type Step =
  | { op: 'try'; side: Side; client: number }
  | { op: 'with'; side: Side; client: number; body: Step[] }
  | { op: 'release'; index: number }
  | { op: 'expire'; index: number };

const stepArb: fc.Memo<Step> = fc.memo((depth) => {
  const side = fc.constantFrom<Side>('read', 'write');
  const client = fc.nat({ max: 2 });
  const leaf = fc.oneof(
    fc.record({ op: fc.constant('try' as const), side, client }),
    fc.record({ op: fc.constant('release' as const), index: fc.nat({ max: 7 }) }),
    fc.record({ op: fc.constant('expire' as const), index: fc.nat({ max: 7 }) }),
  );
  if (depth <= 1) return leaf;
  const body = fc.array(stepArb(depth - 1), { maxLength: 4 });
  return fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 2, arbitrary: fc.record({ op: fc.constant('with' as const), side, client, body }) });
});

/** A hold the model tracks: a lease of its own (top level or downgrade) or a withLock frame's. */
interface Holder {
  readonly side: Side;
  readonly token: number;
  /** The hash field Redis keeps for it (its owner id), found by diffing the hash. */
  readonly field: string;
  state: 'held' | 'released' | 'expired';
  readonly lease?: Lease;
}

interface Frame {
  readonly client: number;
  readonly side: Side;
  readonly holder: Holder;
}

class Model {
  readonly holders: Holder[] = [];
  readonly leases: Holder[] = [];
  maxToken = -1;
  maxWriteToken = -1;

  live(): Holder[] {
    return this.holders.filter((h) => h.state === 'held');
  }

  /** May a new owner take `side` now? */
  grants(side: Side): boolean {
    const live = this.live();
    return side === 'read' ? live.every((h) => h.side === 'read') : live.length === 0;
  }

  /** Checks the fencing rules for a new hold's token and records it. */
  checkToken(side: Side, token: number): void {
    if (side === 'write') {
      expect(token, 'a writer token is above every earlier token').toBeGreaterThan(this.maxToken);
      this.maxWriteToken = token;
    } else {
      expect(token, "a reader's token is at least every earlier writer's").toBeGreaterThanOrEqual(this.maxWriteToken);
    }
    this.maxToken = Math.max(this.maxToken, token);
  }
}

/** How often each case was reached over the whole property, so a generator change cannot silently skip one. */
const tally = new Map<string, number>();
const count = (tag: string) => tally.set(tag, (tally.get(tag) ?? 0) + 1);

/** The error code a call rejected with. */
const code = (error: unknown) => (error as { code?: string }).code ?? String(error);

async function runProgram(redisClients: import('ioredis').Redis[], observer: import('ioredis').Redis, steps: Step[]) {
  const prefix = uniqueName('rwm');
  const clients = redisClients.map((redis) => new LockClient(redis, { prefix }));
  const docs = clients.map((c) => c.readWriteLock('doc'));
  const key = docs[0]!.read.keys.lock;
  const model = new Model();
  const expiryKey = docs[0]!.read.keys.expiry!;
  // Holder entries only: '!' names the writer beside its entry.
  const fields = async () => new Set(Object.keys(await observer.hgetall(key)).filter((f) => f !== '!'));

  /** Registers a new hold: its field is the one the hash did not have before. */
  const track = async (before: Set<string>, side: Side, lease: Lease): Promise<Holder> => {
    const added = [...(await fields())].filter((f) => !before.has(f));
    expect(added, 'one new field per new hold').toHaveLength(1);
    model.checkToken(side, lease.token);
    const holder: Holder = { side, token: lease.token, field: added[0]!, state: 'held', lease };
    model.holders.push(holder);
    return holder;
  };

  /** The relation of a new `side` call by `client` to the chain's enclosing frames. */
  const relation = (frames: Frame[], client: number, side: Side) => {
    const mine = frames.filter((f) => f.client === client);
    const same = [...mine].reverse().find((f) => f.side === side);
    if (same) return { kind: 'reenter' as const, frame: same };
    if (side === 'read' && mine.some((f) => f.side === 'write')) return { kind: 'downgrade' as const };
    if (side === 'write' && mine.some((f) => f.side === 'read')) return { kind: 'upgrade' as const };
    return { kind: 'new' as const };
  };

  async function run(step: Step, frames: Frame[]): Promise<void> {
    if (step.op === 'release' || step.op === 'expire') {
      const holder = model.leases[step.index % Math.max(model.leases.length, 1)];
      if (!holder) return;
      if (step.op === 'expire') {
        if (holder.state !== 'held') return;
        // The holder's lease ran out on the server (a crashed process's would).
        await observer.zadd(expiryKey, 1, holder.field);
        holder.state = 'expired';
        count('expire');
        return;
      }
      const outcome = await holder.lease!.release().then(() => 'ok', code);
      expect(outcome).toBe(holder.state === 'held' ? 'ok' : 'ERR_LOCK_NOT_HELD');
      count(`release-${holder.state}`);
      if (holder.state === 'held') holder.state = 'released';
      return;
    }
    const lock = docs[step.client]![step.side];
    const rel = relation(frames, step.client, step.side);
    if (rel.kind === 'upgrade') {
      const outcome =
        step.op === 'try'
          ? await lock.tryAcquire().then(() => 'granted', code)
          : await lock.withLock(() => 'granted', { waitMs: FREE_WAIT_MS }).catch(code);
      expect(outcome).toBe('ERR_LOCK_UPGRADE');
      count('upgrade-refused');
      return;
    }
    count(`${rel.kind}-${step.side}`);
    if (rel.kind === 'reenter') {
      if (step.op === 'try') {
        const lease = (await lock.tryAcquire())!;
        expect(lease.token).toBe(rel.frame.holder.token);
        expect(lease.holdCount).toBeGreaterThan(1);
        await lease.release();
      } else {
        await lock.withLock(async (lease) => {
          expect(lease.token).toBe(rel.frame.holder.token);
          for (const inner of step.body) await run(inner, frames);
        });
      }
      return;
    }
    const granted = rel.kind === 'downgrade' || model.grants(step.side);
    count(`${step.op}-${step.side}-${granted ? 'granted' : 'busy'}`);
    const before = await fields();
    if (step.op === 'try') {
      const lease = await lock.tryAcquire();
      expect(lease !== null, `tryAcquire(${step.side}) by client ${step.client}`).toBe(granted);
      if (lease) model.leases.push(await track(before, step.side, lease));
      return;
    }
    let holder: Holder | undefined;
    const outcome = await lock
      .withLock(async (lease) => {
        holder = await track(before, step.side, lease);
        const frame = { client: step.client, side: step.side, holder };
        for (const inner of step.body) await run(inner, [...frames, frame]);
      }, { waitMs: granted ? FREE_WAIT_MS : BUSY_WAIT_MS })
      .then(() => 'ok', code);
    expect(outcome, `withLock(${step.side}) by client ${step.client}`).toBe(granted ? 'ok' : 'ERR_LOCK_TIMEOUT');
    if (holder) holder.state = 'released';
  }

  try {
    for (const step of steps) await run(step, []);
    for (const holder of model.leases) {
      const outcome = await holder.lease!.release().then(() => 'ok', code);
      expect(outcome).toBe(holder.state === 'held' ? 'ok' : 'ERR_LOCK_NOT_HELD');
    }
    // Nothing left: both sides free (expired fields are dropped by the next call), no waiter left.
    expect(await docs[0]!.write.tryAcquire().then((l) => l?.release().then(() => true))).toBe(true);
    expect(await observer.exists(key, docs[0]!.read.keys.queue, docs[0]!.read.keys.waiters)).toBe(0);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

describe('read-write lock against a reference model', () => {
  const redis = useModelRedis();

  it('try / withLock / re-entry / downgrade / upgrade / release / expiry programs follow the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb(3), { minLength: 1, maxLength: 10 }), async (steps) => {
        await runProgram(redis.clients, redis.observer, steps);
      }),
      { numRuns: NUM_RUNS, seed: SEED, endOnFailure: !FULL },
    );
    const reached = [...tally.keys()];
    for (const tag of ['expire', 'release-expired', 'upgrade-refused', 'reenter-read', 'reenter-write', 'downgrade-read',
      'try-read-busy', 'try-write-busy', 'with-read-busy', 'with-write-busy', 'with-write-granted']) {
      expect(reached, `programs reached ${tag}`).toContain(tag);
    }
  }, 600_000);
});
