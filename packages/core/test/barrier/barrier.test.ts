import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import {
  BarrierBrokenError,
  ClientClosedError,
  InvalidArgumentError,
  LockTimeoutError,
  PartyCountMismatchError,
  TELEMETRY_CHANNELS,
  type BrokenEvent,
  type SyncMessage,
  type TrippedEvent,
} from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useSyncServer } from '../latch/latch-fixture.js';

const caught = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('barrier', () => {
  const fx = useSyncServer();

  /** Resolves once `count` parties wait at the barrier, read from Redis. */
  async function waiting(barrier: { keys: { parties: string } }, count: number): Promise<void> {
    const admin = fx.redis();
    await waitFor(async () => (await admin.zcount(barrier.keys.parties, '-inf', '(inf')) === count, { timeoutMs: 10_000 });
  }

  it('trips on the last arrival: every party returns the same generation, and the next arrivals start the next one', async () => {
    const prefix = fx.prefix();
    const clients = Array.from({ length: 3 }, () => fx.client({ prefix }));
    const barrier = clients[0]!.barrier('stage', { parties: 3 });
    expect(barrier.parties).toBe(3);
    expect(await barrier.state()).toEqual({ parties: 3, generation: 0, waiting: 0 });
    const first = [clients[0]!.barrier('stage', { parties: 3 }).arrive(), clients[1]!.barrier('stage', { parties: 3 }).arrive()];
    await waiting(barrier, 2);
    expect(await barrier.state()).toEqual({ parties: 3, generation: 0, waiting: 2 });
    const last = await clients[2]!.barrier('stage', { parties: 3 }).arrive();
    expect(last).toEqual({ generation: 0 });
    expect(await Promise.all(first)).toEqual([{ generation: 0 }, { generation: 0 }]);
    const second = await Promise.all(clients.map((c) => c.barrier('stage', { parties: 3 }).arrive({ waitMs: 10_000 })));
    expect(second).toEqual([{ generation: 1 }, { generation: 1 }, { generation: 1 }]);
    expect(await barrier.state()).toEqual({ parties: 3, generation: 2, waiting: 0 });
  });

  it('parties: 1 trips at once, every time', async () => {
    const barrier = fx.client({ prefix: fx.prefix() }).barrier('solo', { parties: 1 });
    expect(await barrier.arrive()).toEqual({ generation: 0 });
    expect(await barrier.arrive()).toEqual({ generation: 1 });
    expect(await barrier.arrive()).toEqual({ generation: 2 });
  });

  it('a party that times out gets LockTimeoutError and breaks the generation for the others; the next arrivals start afresh', async () => {
    const prefix = fx.prefix();
    const a = fx.client({ prefix }).barrier('timeout', { parties: 3 });
    const b = fx.client({ prefix }).barrier('timeout', { parties: 3 });
    const other = caught(a.arrive());
    await waiting(a, 1);
    const timedOut = await caught(b.arrive({ waitMs: 200 }));
    expect(timedOut).toBeInstanceOf(LockTimeoutError);
    const broken = (await other) as BarrierBrokenError;
    expect(broken).toBeInstanceOf(BarrierBrokenError);
    expect(broken.code).toBe('ERR_BARRIER_BROKEN');
    expect([broken.generation, broken.reason, broken.barrierName]).toEqual([0, 'timeout', 'timeout']);
    expect(await a.state()).toEqual({ parties: 3, generation: 0, waiting: 0 });
    const c = fx.client({ prefix }).barrier('timeout', { parties: 3 });
    expect(await Promise.all([a.arrive(), b.arrive(), c.arrive()])).toEqual([{ generation: 0 }, { generation: 0 }, { generation: 0 }]);
  });

  it('an aborted party rejects with the reason, a closed one with ClientClosedError: each breaks the generation', async () => {
    const prefix = fx.prefix();
    const a = fx.client({ prefix }).barrier('stop', { parties: 3 });
    const bClient = fx.client({ prefix });
    const b = bClient.barrier('stop', { parties: 3 });
    const controller = new AbortController();
    const other = caught(a.arrive());
    const aborted = caught(b.arrive({ signal: controller.signal }));
    await waiting(a, 2);
    const reason = new Error('enough');
    controller.abort(reason);
    expect(await aborted).toBe(reason);
    expect(((await other) as BarrierBrokenError).reason).toBe('aborted');
    const again = caught(a.arrive());
    const closing = caught(b.arrive());
    await waiting(a, 2);
    await bClient.close();
    expect(await closing).toBeInstanceOf(ClientClosedError);
    const broken = (await again) as BarrierBrokenError;
    expect([broken.reason, broken.generation]).toEqual(['closed', 0]);
    expect(() => bClient.barrier('stop', { parties: 3 })).toThrow(ClientClosedError);
    await expect(b.arrive()).rejects.toBeInstanceOf(ClientClosedError);
  });

  it('close() ends every wait and party of the client, and leaves no timer behind', async () => {
    const prefix = fx.prefix();
    const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const before = timers();
    const locks = fx.client({ prefix });
    await locks.countDownLatch('held').trySetCount(1);
    const pending = [
      caught(locks.countDownLatch('held').wait()),
      caught(locks.barrier('held', { parties: 3 }).arrive({ leaseMs: 600 })),
      caught(locks.barrier('held', { parties: 3 }).arrive({ waitMs: 60_000 })),
    ];
    await waiting(locks.barrier('held', { parties: 3 }), 2);
    await locks.close();
    for (const outcome of await Promise.all(pending)) expect(outcome).toBeInstanceOf(ClientClosedError);
    expect(timers()).toBeLessThanOrEqual(before);
    // The parties left the barrier: its generation was broken, and nobody waits.
    expect(await fx.client({ prefix }).barrier('held', { parties: 3 }).state()).toEqual({ parties: 3, generation: 0, waiting: 0 });
  });

  it('a party whose connection dies is lost: the others break within its lease and 1 s, even a lease shorter than theirs', async () => {
    const prefix = fx.prefix();
    const a = fx.client({ prefix }).barrier('lost', { parties: 3 });
    const lostRedis = fx.redis();
    const other = caught(a.arrive({ leaseMs: 30_000 }));
    await waiting(a, 1);
    const { LockClient } = await import('@holdfast/core');
    const doomed = new LockClient(lostRedis, { prefix, commandTimeoutMs: 200, retries: 0 });
    const errors: unknown[] = [];
    doomed.on('error', (error) => errors.push(error));
    fx.onCleanup(() => doomed.close());
    const lostParty = caught(doomed.barrier('lost', { parties: 3 }).arrive({ leaseMs: 600 }));
    await waiting(a, 2);
    const cutAt = performance.now();
    lostRedis.disconnect();
    const broken = (await other) as BarrierBrokenError;
    const tookMs = performance.now() - cutAt;
    expect(broken).toBeInstanceOf(BarrierBrokenError);
    expect([broken.reason, broken.generation]).toEqual(['lost', 0]);
    expect(tookMs).toBeLessThan(600 + 1_000);
    // The lost party itself finds out when its own lease ends unconfirmed.
    expect(((await lostParty) as BarrierBrokenError).reason).toBe('lost');
    expect(errors.length).toBeGreaterThan(0);
  });

  it('a waiting party renews its own lease: it waits past it, and is not lost', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    const a = fx.client({ prefix }).barrier('renew', { parties: 2 });
    const first = a.arrive({ leaseMs: 300 });
    await waiting(a, 1);
    const [party] = await admin.zrange(a.keys.parties, '0', '0');
    const firstEnd = Number(await admin.zscore(a.keys.parties, party!));
    // Renewed: its lease end moves on, several times past the first one.
    await waitFor(async () => Number(await admin.zscore(a.keys.parties, party!)) > firstEnd + 600, { timeoutMs: 10_000 });
    expect(await fx.client({ prefix }).barrier('renew', { parties: 2 }).arrive()).toEqual({ generation: 0 });
    expect(await first).toEqual({ generation: 0 });
  });

  it('the party count is stored: another count gets PartyCountMismatchError until setParties(n)', async () => {
    const prefix = fx.prefix();
    const three = fx.client({ prefix }).barrier('count', { parties: 3 });
    const two = fx.client({ prefix }).barrier('count', { parties: 2 });
    const waitingParty = three.arrive();
    await waiting(three, 1);
    const mismatch = (await caught(two.arrive())) as PartyCountMismatchError;
    expect(mismatch).toBeInstanceOf(PartyCountMismatchError);
    expect(mismatch.code).toBe('ERR_PARTY_COUNT_MISMATCH');
    expect([mismatch.barrierName, mismatch.expected, mismatch.stored]).toEqual(['count', 2, 3]);
    await expect(two.state()).rejects.toBeInstanceOf(PartyCountMismatchError);
    expect(await fx.client({ prefix }).barrier('count', { parties: 3 }).state()).toMatchObject({ waiting: 1 });
    // Lowered to 2 with one waiting: the next arrival trips it.
    expect(await two.setParties(2)).toBe(3);
    expect(two.parties).toBe(2);
    await expect(three.arrive()).rejects.toBeInstanceOf(PartyCountMismatchError);
    expect(await two.arrive()).toEqual({ generation: 0 });
    expect(await waitingParty).toEqual({ generation: 0 });
    // Lowered to as many as wait: they go through at once.
    const one = two.arrive();
    await waiting(two, 1);
    expect(await fx.client({ prefix }).barrier('count', { parties: 2 }).setParties(1)).toBe(2);
    expect(await one).toEqual({ generation: 1 });
    expect(await fx.client({ prefix }).barrier('fresh', { parties: 2 }).setParties(4)).toBeUndefined();
  });

  it('every key of a barrier of 40 used once ends with a TTL (the default: a day after its last call)', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    const clients = [fx.client({ prefix }), fx.client({ prefix })];
    const barriers = Array.from({ length: 40 }, (_, i) => clients[i % 2]!.barrier('forty', { parties: 40 }));
    expect(await Promise.all(barriers.map((barrier) => barrier.arrive()))).toEqual(Array.from({ length: 40 }, () => ({ generation: 0 })));
    const { keys } = barriers[0]!;
    // The 40 arrivals are still remembered (for resends), in keys that expire.
    expect(await admin.zcount(keys.records, '-inf', '(inf')).toBe(40);
    for (const key of [keys.barrier, keys.parties, keys.records]) {
      const ttl = await admin.pttl(key);
      expect(ttl === -2 || (ttl > 0 && ttl <= 86_400_000), `${key}: ${ttl}`).toBe(true);
    }
    expect(await admin.exists(keys.barrier, keys.records)).toBe(2);
    expect(barriers[0]!.ttlMs).toBe(86_400_000);
  });

  it('a barrier whose ttlMs is shorter than a wait keeps its keys for as long as its arrivals are remembered', async () => {
    const prefix = fx.prefix();
    const admin = fx.redis();
    const barrier = fx.client({ prefix }).barrier('brief', { parties: 2, ttlMs: 1 });
    const first = barrier.arrive({ leaseMs: 600 }).catch((error: unknown) => error);
    await waiting(barrier, 1);
    const [party] = await admin.zrange(barrier.keys.parties, '0', '0');
    const firstEnd = Number(await admin.zscore(barrier.keys.parties, party!));
    // Renewed past its first lease: each renewal moves the keys' expiry with the arrival's record.
    await waitFor(async () => Number(await admin.zscore(barrier.keys.parties, party!)) > firstEnd + 600, { timeoutMs: 10_000 });
    const remembered = Number(await admin.zscore(barrier.keys.records, party!));
    for (const key of [barrier.keys.barrier, barrier.keys.parties, barrier.keys.records]) {
      expect(Number(await admin.call('PEXPIRETIME', key)), key).toBeGreaterThanOrEqual(remembered);
    }
    expect(await fx.client({ prefix }).barrier('brief', { parties: 2, ttlMs: 1 }).arrive()).toEqual({ generation: 0 });
    expect(await first).toEqual({ generation: 0 });
  });

  it('refuses bad input with InvalidArgumentError', async () => {
    const locks = fx.client({ prefix: fx.prefix() });
    for (const parties of [0, -1, 2.5, '2', 1_000_001]) {
      expect(() => locks.barrier('x', { parties: parties as number })).toThrow(InvalidArgumentError);
    }
    expect(() => locks.barrier('x', undefined as never)).toThrow('Expected `parties` to be a positive integer, got `undefined`');
    expect(() => locks.barrier('', { parties: 2 })).toThrow(InvalidArgumentError);
    for (const ttlMs of [0, -1, 1.5, '1']) {
      expect(() => locks.barrier('x', { parties: 2, ttlMs: ttlMs as number })).toThrow(InvalidArgumentError);
    }
    const barrier = locks.barrier('x', { parties: 2 });
    for (const options of [{ leaseMs: 0 }, { waitMs: -1 }, { waitMs: 1.5 }, { signal: {} }, 'x']) {
      await expect(barrier.arrive(options as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(barrier.setParties(0)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('emits tripped and broken with kind barrier, and traces arrive on holdfast:sync', async () => {
    const prefix = fx.prefix();
    const locks = fx.client({ prefix });
    const tripped: TrippedEvent[] = [];
    const broken: BrokenEvent[] = [];
    locks.on('tripped', (event) => tripped.push(event));
    locks.on('broken', (event) => broken.push(event));
    const traced: SyncMessage[] = [];
    const onEnd = (message: unknown) => traced.push(message as SyncMessage);
    const channel = `tracing:${TELEMETRY_CHANNELS.sync}:asyncEnd`;
    subscribe(channel, onEnd);
    try {
      const barrier = locks.barrier('events', { parties: 2 });
      await Promise.all([barrier.arrive(), barrier.arrive()]);
      await caught(barrier.arrive({ waitMs: 50 }));
    } finally {
      unsubscribe(channel, onEnd);
    }
    expect(tripped.map((e) => [e.name, e.kind, e.generation])).toEqual([
      ['events', 'barrier', 0],
      ['events', 'barrier', 0],
    ]);
    expect(broken.map((e) => [e.kind, e.generation, e.reason, e.byThisParty])).toEqual([['barrier', 1, 'timeout', true]]);
    expect(traced.map((m) => [m.kind, m.operation, m.result ?? m.error?.constructor])).toEqual([
      ['barrier', 'arrive', { generation: 0 }],
      ['barrier', 'arrive', { generation: 0 }],
      ['barrier', 'arrive', LockTimeoutError],
    ]);
  });
});
