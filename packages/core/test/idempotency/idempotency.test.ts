import {
  ClientClosedError,
  IdempotencyConflictError,
  IdempotencyInProgressError,
  InvalidArgumentError,
  KeyConflictError,
  LockLostError,
  LockTimeoutError,
  ResultValueError,
  SingleFlightError,
} from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/** A promise and its resolver: a step of `fn` the test releases. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Subscribers of the channel whose name ends `:{tag}:<tail>` under `prefix`. */
async function subscribersOf(admin: Redis, prefix: string, tail: string): Promise<number> {
  const [channel] = (await admin.call('PUBSUB', 'SHARDCHANNELS', `${prefix}:{*}:${tail}`)) as string[];
  if (channel === undefined) return 0;
  return Number(((await admin.call('PUBSUB', 'SHARDNUMSUB', channel)) as unknown[])[1]);
}

/** Idempotency keys and single-flight on one server, several clients standing for processes. */
describe('idempotency', () => {
  const fx = useRedis();
  const subscribers = (admin: Redis, tail: string) => subscribersOf(admin, fx.prefix, tail);

  /** The record key of `requestKey` of `name` (found by its documented shape, not computed). */
  async function recordKey(admin: Redis, name: string, requestKey: string): Promise<string> {
    const found = await admin.keys(`${fx.prefix}:{*}:idem:${name.length}:${name}:${requestKey}`);
    expect(found).toHaveLength(1);
    return found[0]!;
  }

  it('runs fn once for concurrent duplicates across clients; every one gets its value, replayed all but one; a later one replays', async () => {
    const clients = await Promise.all(Array.from({ length: 4 }, () => fx.client()));
    const started = gate();
    const release = gate();
    let runs = 0;
    const call = (i: number) =>
      clients[i % 4]!.idempotency<{ charge: string }>('payments').run('order-1', async ({ token }) => {
        runs++;
        started.open();
        await release.promise;
        return { charge: `ch_${token}` };
      }, { fingerprint: 'body-a' });
    const first = call(0);
    await started.promise;
    const duplicates = Array.from({ length: 11 }, (_, i) => call(i + 1));
    // The duplicates are waiting (subscribed, none of them running fn) before fn ends.
    await waitFor(async () => (await clients[1]!.idempotency('payments').get('order-1'))?.state === 'running');
    release.open();
    const results = await Promise.all([first, ...duplicates]);
    expect(runs).toBe(1);
    const [head] = results;
    for (const result of results) expect(result.value).toEqual(head!.value);
    expect(results.filter((r) => !r.replayed)).toEqual([head]);
    expect(head!.value.charge).toBe(`ch_${head!.token}`);
    const later = await clients[3]!.idempotency('payments').run('order-1', () => ({ charge: 'never' }), { fingerprint: 'body-a' });
    expect(later).toEqual({ value: head!.value, replayed: true, token: head!.token });
    expect(runs).toBe(1);
    expect(await clients[2]!.idempotency('payments').get('order-1')).toEqual({ state: 'done', value: head!.value, fingerprint: 'body-a', token: head!.token });
  });

  it('refuses another fingerprint while the first runs and once it is done; fn does not run', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const release = gate();
    const running = a.idempotency('orders').run('k', async () => {
      await release.promise;
      return 1;
    }, { fingerprint: 'one' });
    await waitFor(async () => (await b.idempotency('orders').get('k'))?.state === 'running');
    let ran = false;
    const during = await b.idempotency('orders').run('k', () => (ran = true), { fingerprint: 'two' }).catch((e: unknown) => e);
    expect(during).toBeInstanceOf(IdempotencyConflictError);
    expect(during).toMatchObject({ code: 'ERR_IDEMPOTENCY_CONFLICT', key: 'k', idempotency: 'orders' });
    release.open();
    expect(await running).toMatchObject({ value: 1, replayed: false });
    await expect(b.idempotency('orders').run('k', () => (ran = true))).rejects.toBeInstanceOf(IdempotencyConflictError);
    expect(ran).toBe(false);
  });

  it('fn rejects: its error as it is, nothing stored, and a waiting duplicate claims the key and runs fn', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const release = gate();
    const failure = new Error('card declined');
    let firstToken = 0;
    const first = a.idempotency('pay').run('r', async ({ token }) => {
      firstToken = token;
      await release.promise;
      throw failure;
    });
    await waitFor(async () => (await b.idempotency('pay').get('r'))?.state === 'running');
    const second = b.idempotency('pay').run('r', ({ token }) => ({ token }));
    // The duplicate waits (subscribed to the key's channel) before the first fails.
    await waitFor(async () => (await subscribers(await fx.redis(), `idemc:3:pay:r`)) === 1);
    release.open();
    await expect(first).rejects.toBe(failure);
    const retried = await second;
    expect(retried.replayed).toBe(false);
    expect(retried.value.token).toBeGreaterThan(firstToken);
  });

  it('waitMs: 0 answers at once with IdempotencyInProgressError while the first runs', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const release = gate();
    const first = a.idempotency('x').run('r', () => release.promise.then(() => 'v'));
    await waitFor(async () => (await b.idempotency('x').get('r'))?.state === 'running');
    const error = await b.idempotency('x').run('r', () => 'w', { waitMs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IdempotencyInProgressError);
    expect(error).toMatchObject({ code: 'ERR_IDEMPOTENCY_IN_PROGRESS', key: 'r', idempotency: 'x' });
    release.open();
    expect((await first).value).toBe('v');
  });

  it('a value too large or not serializable is a ResultValueError: nothing stored, the key free again', async () => {
    const locks = await fx.client();
    const small = locks.idempotency('big', { maxValueBytes: 8 });
    const big = await small.run('r', () => 'é'.repeat(8)).catch((e: unknown) => e);
    expect(big).toBeInstanceOf(ResultValueError);
    expect(big).toMatchObject({ code: 'ERR_RESULT_VALUE', bytes: 18 });
    expect(await small.get('r')).toBeNull();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(locks.idempotency('json').run('r', () => cyclic)).rejects.toBeInstanceOf(ResultValueError);
    await expect(locks.idempotency('json').run('r', () => 10n)).rejects.toBeInstanceOf(ResultValueError);
    expect(await locks.idempotency('json').get('r')).toBeNull();
    // undefined (a void fn) is stored and replayed as such.
    expect(await locks.idempotency('json').run('void', () => undefined)).toMatchObject({ value: undefined, replayed: false });
    expect(await locks.idempotency('json').run('void', () => 1)).toMatchObject({ value: undefined, replayed: true });
  });

  it('custom serialize and deserialize', async () => {
    const locks = await fx.client();
    const dates = locks.idempotency<Date>('dates', { serialize: (d) => String(d.getTime()), deserialize: (s) => new Date(Number(s)) });
    const when = new Date(1_700_000_000_000);
    await dates.run('r', () => when);
    const replay = await dates.run('r', () => new Date());
    expect(replay.replayed).toBe(true);
    expect(replay.value).toEqual(when);
  });

  it('keeps the result ttlMs after completion, then the key runs again; forget() removes it at once', async () => {
    const admin = await fx.redis();
    const locks = await fx.client();
    const short = locks.idempotency('ttl', { ttlMs: 300 });
    await short.run('r', () => 1);
    const pttl = await admin.pttl(await recordKey(admin, 'ttl', 'r'));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(300);
    await waitFor(async () => (await short.get('r')) === null);
    expect(await short.run('r', () => 2)).toMatchObject({ value: 2, replayed: false });
    expect(await short.forget('r')).toBe(true);
    expect(await short.forget('r')).toBe(false);
    expect(await short.run('r', () => 3)).toMatchObject({ value: 3, replayed: false });
  });

  it('a claim taken from it never stores its result: the call rejects with LockLostError', async () => {
    const admin = await fx.redis();
    const locks = await fx.client();
    const idem = locks.idempotency('lost');
    const error = await idem
      .run('r', async () => {
        // Another owner's claim now (as after an expiry and a takeover).
        await admin.hset(await recordKey(admin, 'lost', 'r'), 'o', 'someone-else');
        return 'late';
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    expect(await idem.get('r')).toMatchObject({ state: 'running' });
    expect(await admin.hget(await recordKey(admin, 'lost', 'r'), 'v')).toBe('');
  });

  it('foreign data at the key is a KeyConflictError and stays untouched', async () => {
    const admin = await fx.redis();
    const locks = await fx.client();
    await locks.idempotency('f').run('r', () => 1);
    const key = await recordKey(admin, 'f', 'r');
    await admin.del(key);
    await admin.set(key, 'mine');
    for (const call of [() => locks.idempotency('f').run('r', () => 2), () => locks.idempotency('f').get('r'), () => locks.idempotency('f').forget('r')]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeyConflictError);
      expect(error).toMatchObject({ kind: 'idempotency' });
    }
    await admin.del(key);
    await admin.hset(key, 'a', 'b');
    await expect(locks.idempotency('f').run('r', () => 2)).rejects.toBeInstanceOf(KeyConflictError);
    expect(await admin.hgetall(key)).toEqual({ a: 'b' });
  });

  it('bad input is an InvalidArgumentError and writes nothing', async () => {
    const admin = await fx.redis();
    const prefix = `${fx.prefix}bad`;
    const locks = await fx.client({ prefix });
    const bad: (() => unknown)[] = [
      () => locks.idempotency(''),
      () => locks.idempotency('n', { ttlMs: 0 }),
      () => locks.idempotency('n', { maxValueBytes: -1 }),
      () => locks.idempotency('n', { serialize: 'x' as never }),
      () => locks.idempotency('n', { leaseMs: 1 }),
    ];
    for (const make of bad) expect(make).toThrow(InvalidArgumentError);
    const idem = locks.idempotency('n');
    for (const call of [
      () => idem.run('', () => 1),
      () => idem.run('r', 'x' as never),
      () => idem.run('r', () => 1, { fingerprint: '' }),
      () => idem.run('r', () => 1, { waitMs: -1 }),
      () => idem.run('r', () => 1, { fingerprint: 'a'.repeat(1025) }),
      () => idem.get('\ud800'),
      () => locks.singleFlight('', () => 1),
      () => locks.singleFlight('k', () => 1, { waitMs: 1.5 }),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(await admin.keys(`${prefix}:*`)).toEqual([]);
  });

  it("a duplicate's signal ends its wait with the signal's reason; fn does not run there", async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const release = gate();
    const first = a.idempotency('s').run('r', () => release.promise.then(() => 1));
    await waitFor(async () => (await b.idempotency('s').get('r'))?.state === 'running');
    const controller = new AbortController();
    let ran = false;
    const waiting = b.idempotency('s').run('r', () => (ran = true), { signal: controller.signal }).catch((e: unknown) => e);
    await waitFor(async () => (await subscribers(await fx.redis(), 'idemc:1:s:r')) === 1);
    const reason = new Error('client went away');
    controller.abort(reason);
    expect(await waiting).toBe(reason);
    release.open();
    expect((await first).value).toBe(1);
    expect(ran).toBe(false);
  });

  it("with an ioredis keyPrefix, a waiting duplicate is woken over pub/sub by the store (not by the claim's expiry)", async () => {
    const server = await fx.server();
    const [ra, rb] = [server.client({ keyPrefix: 'kp:' }), server.client({ keyPrefix: 'kp:' })];
    const [a, b] = [await fx.client({}, ra), await fx.client({}, rb)];
    const release = gate();
    const first = a.idempotency('kp', { leaseMs: 120_000 }).run('r', () => release.promise.then(() => 'v'));
    await waitFor(async () => (await b.idempotency('kp').get('r'))?.state === 'running');
    // The claim lives two minutes: only the store's message can end this wait within its waitMs.
    const waiting = b.idempotency('kp', { leaseMs: 120_000 }).run('r', () => 'w', { waitMs: 30_000 });
    await waitFor(async () => (await kpSubscribers(await fx.redis())) === 1);
    release.open();
    expect(await first).toMatchObject({ value: 'v', replayed: false });
    expect(await waiting).toMatchObject({ value: 'v', replayed: true });
    ra.disconnect();
    rb.disconnect();
  });

  /** Subscribers of the keyPrefix test's channel (`kp:<prefix>:{tag}:idemc:2:kp:r`). */
  async function kpSubscribers(admin: Redis): Promise<number> {
    const [channel] = (await admin.call('PUBSUB', 'SHARDCHANNELS', `kp:${fx.prefix}:{*}:idemc:2:kp:r`)) as string[];
    if (channel === undefined) return 0;
    return Number(((await admin.call('PUBSUB', 'SHARDNUMSUB', channel)) as unknown[])[1]);
  }

  it('close() ends a waiting duplicate with ClientClosedError', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const release = gate();
    const first = a.idempotency('c').run('r', () => release.promise.then(() => 1));
    await waitFor(async () => (await b.idempotency('c').get('r'))?.state === 'running');
    const waiting = b.idempotency('c').run('r', () => 2).catch((e: unknown) => e);
    await waitFor(async () => (await subscribers(await fx.redis(), `idemc:1:c:r`)) === 1);
    await b.close();
    expect(await waiting).toBeInstanceOf(ClientClosedError);
    release.open();
    expect((await first).value).toBe(1);
  });
});

describe('singleFlight', () => {
  const fx = useRedis();

  it('runs fn once for concurrent callers of several clients; a call after completion starts a new flight', async () => {
    const clients = await Promise.all(Array.from({ length: 3 }, () => fx.client()));
    const release = gate();
    let runs = 0;
    const flight = () =>
      Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          clients[i % 3]!.singleFlight('fx:2026-01-01', async () => {
            runs++;
            await release.promise;
            return { rate: runs };
          }),
        ),
      );
    const pending = flight();
    await waitFor(() => runs === 1);
    release.open();
    const values = await pending;
    expect(runs).toBe(1);
    for (const value of values) expect(value).toEqual({ rate: 1 });
    expect(await clients[0]!.singleFlight('fx:2026-01-01', () => ({ rate: 2 }))).toEqual({ rate: 2 });
  });

  it("a failed flight: the runner's process gets the error object itself, other processes a SingleFlightError with its name, message and code", async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const release = gate();
    const failure = Object.assign(new TypeError('upstream down'), { code: 'E_UP' });
    let started = false;
    const runner = a.singleFlight('k', async () => {
      started = true;
      await release.promise;
      throw failure;
    });
    await waitFor(() => started);
    const local = a.singleFlight('k', () => 'never');
    // It rejects with the runner, while the test awaits other things: a handler at once keeps it from being reported unhandled.
    local.catch(() => undefined);
    const remote = b.singleFlight('k', () => 'never').catch((e: unknown) => e);
    // The remote caller has joined: subscribed to the flight's channel (the local one shares the runner's promise).
    await waitFor(async () => (await subscribersOf(await fx.redis(), fx.prefix, 'sfc:k')) === 1);
    release.open();
    await expect(runner).rejects.toBe(failure);
    await expect(local).rejects.toBe(failure);
    const error = await remote;
    expect(error).toBeInstanceOf(SingleFlightError);
    expect(error).toMatchObject({ code: 'ERR_SINGLE_FLIGHT', key: 'k', message: 'upstream down', cause: { name: 'TypeError', message: 'upstream down', code: 'E_UP' } });
  });

  it('a caller whose waitMs runs out rejects with LockTimeoutError; the flight goes on', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const release = gate();
    let started = false;
    const runner = a.singleFlight('slow', async () => {
      started = true;
      await release.promise;
      return 'done';
    }, { waitMs: 1 });
    await waitFor(() => started);
    await expect(b.singleFlight('slow', () => 'x', { waitMs: 50 })).rejects.toBeInstanceOf(LockTimeoutError);
    await expect(a.singleFlight('slow', () => 'x', { waitMs: 0 })).rejects.toBeInstanceOf(LockTimeoutError);
    release.open();
    expect(await runner).toBe('done');
  });


});
