import {
  ClientClosedError,
  InvalidArgumentError,
  LeadershipLostError,
  LockTimeoutError,
  type AcquiredEvent,
  type Leader,
  type LostEvent,
  type ReleasedEvent,
} from '@holdfast/core';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { TELEMETRY_CHANNELS, type AcquireMessage, type LostMessage, type ReleaseMessage } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/** Every key of election `name` (its term, queue and candidate table) still in Redis. */
async function leftKeys(redis: { keys(pattern: string): Promise<string[]> }, prefix: string, name: string): Promise<string[]> {
  return redis.keys(`${prefix}:{*}:el?:${name}`);
}

describe('election', () => {
  const fx = useRedis();

  it('elects one leader, publishes its value and epoch, and hands over in FIFO order on resign', async () => {
    const [a, b, c] = await Promise.all([fx.client(), fx.client(), fx.client()]);
    const redis = await fx.redis();
    const queue = a.election('fifo').keys.queue;
    const first = await a.election('fifo').campaign({ value: 'a' });
    expect(first.isLeader).toBe(true);
    expect(first.value).toBe('a');
    expect(await c.election('fifo').leader()).toEqual({ value: 'a', epoch: first.epoch });
    const order: string[] = [];
    const second = b.election('fifo').campaign({ value: 'b' }).then((t) => (order.push('b'), t));
    await waitFor(async () => (await redis.llen(queue)) === 1);
    const third = c.election('fifo').campaign({ value: 'c' }).then((t) => (order.push('c'), t));
    await waitFor(async () => (await redis.llen(queue)) === 2);
    await first.resign();
    expect(first.isLeader).toBe(false);
    const termB = await second;
    expect(termB.epoch).toBeGreaterThan(first.epoch);
    expect(await a.election('fifo').leader()).toEqual({ value: 'b', epoch: termB.epoch });
    await termB.resign();
    const termC = await third;
    expect(termC.epoch).toBeGreaterThan(termB.epoch);
    expect(order).toEqual(['b', 'c']);
    await termC.resign();
    expect(await a.election('fifo').leader()).toBeNull();
    expect(await leftKeys(redis, fx.prefix, 'fifo')).toEqual([]);
  });

  it('proclaim changes the published value; resign twice is a no-op; a lost term rejects', async () => {
    const locks = await fx.client();
    const election = locks.election('proclaim', { termMs: 5_000 });
    const term = await election.campaign({ value: 'web-3:8080' });
    await term.proclaim('web-3:9090');
    expect(term.value).toBe('web-3:9090');
    expect(await election.leader()).toEqual({ value: 'web-3:9090', epoch: term.epoch });
    await term.resign();
    await term.resign();
    const next = await election.campaign({ value: 'x' });
    const redis = await fx.redis();
    await redis.del(election.keys.lock);
    await expect(next.proclaim('y')).rejects.toBeInstanceOf(LeadershipLostError);
    expect(next.isLeader).toBe(false);
    expect(next.signal.reason).toBeInstanceOf(LeadershipLostError);
    await expect(next.resign()).rejects.toBeInstanceOf(LeadershipLostError);
  });

  it('rejects a value that is not a string and bad options', async () => {
    const locks = await fx.client();
    const election = locks.election('input');
    await expect(election.campaign({ value: 3 as unknown as string })).rejects.toThrow(
      new InvalidArgumentError('Expected `value` to be a string, got `3`'),
    );
    await expect(election.campaign(undefined as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => locks.election('input', { termMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => locks.election('')).toThrow(InvalidArgumentError);
    const term = await election.campaign({ value: 'ok' });
    await expect(term.proclaim(null as unknown as string)).rejects.toBeInstanceOf(InvalidArgumentError);
    await term.resign();
  });

  it('refuses a term too short to ever be held: no longer than its drift margin', async () => {
    const locks = await fx.client();
    expect(() => locks.election('short', { termMs: 2 })).toThrow(new InvalidArgumentError('Expected `termMs` to be at least 3, got `2`'));
    expect(() => locks.election('short', { termMs: 1 })).toThrow(new InvalidArgumentError('Expected `termMs` to be at least 3, got `1`'));
    expect(locks.election('short', { termMs: 3 }).name).toBe('short');
    const drifting = await fx.client({ driftFactor: 0.5 });
    expect(() => drifting.election('short', { termMs: 4 })).toThrow(new InvalidArgumentError('Expected `termMs` to be at least 5, got `4`'));
    // A term the client's leaseMs gives by default is checked when it is used.
    const short = await fx.client({ leaseMs: 2 });
    await expect(short.election('short').campaign({ value: 'v' })).rejects.toThrow(
      new InvalidArgumentError('Expected `leaseMs` to be at least 3, got `2`'),
    );
    expect(await leftKeys(await fx.redis(), fx.prefix, 'short')).toEqual([]);
  });

  it('refuses a value Redis would not give back as it is: an unpaired surrogate', async () => {
    const locks = await fx.client();
    const election = locks.election('surrogate');
    await expect(election.campaign({ value: 'web-3\uD800' })).rejects.toThrow(
      new InvalidArgumentError('Expected `value` to be a well-formed string (no unpaired UTF-16 surrogate), got `"web-3\\ud800"`'),
    );
    const term = await election.campaign({ value: 'web-3 \u{1F600}' });
    await expect(term.proclaim('\uDC00web-3')).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(term.value).toBe('web-3 \u{1F600}');
    expect(await election.leader()).toEqual({ value: 'web-3 \u{1F600}', epoch: term.epoch });
    await term.resign();
  });

  it('a campaign that gives up (waitMs, signal, close) leaves no trace and is never elected later', async () => {
    const [leader, waiter] = await Promise.all([fx.client(), fx.client()]);
    const redis = await fx.redis();
    const term = await leader.election('give-up').campaign({ value: 'l' });
    await expect(waiter.election('give-up').campaign({ value: 'w', waitMs: 100 })).rejects.toBeInstanceOf(LockTimeoutError);
    const controller = new AbortController();
    const aborted = waiter.election('give-up').campaign({ value: 'w', signal: controller.signal });
    // Handlers at once for the campaigns that give up: a rejection while the test awaits something else is not unhandled.
    aborted.catch(() => undefined);
    const queue = leader.election('give-up').keys.queue;
    await waitFor(async () => (await redis.llen(queue)) === 1);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    const closing = waiter.election('give-up').campaign({ value: 'w' });
    closing.catch(() => undefined);
    await waitFor(async () => (await redis.llen(queue)) === 1);
    await waiter.close();
    await expect(closing).rejects.toBeInstanceOf(ClientClosedError);
    expect(await redis.llen(queue)).toBe(0);
    await term.resign();
    // Nobody was handed the term: every candidate that gave up left the queue.
    expect(await leader.election('give-up').leader()).toBeNull();
    expect(await leftKeys(redis, fx.prefix, 'give-up')).toEqual([]);
  });

  it('a crashed leader blocks the others for at most its term', async () => {
    const [crashed, other] = await Promise.all([fx.client(), fx.client()]);
    const term = await crashed.election('crash', { termMs: 400 }).campaign({ value: 'dead' });
    // Closing leaves the term in Redis, as a crashed process would.
    await crashed.close();
    expect(term.isLeader).toBe(false);
    expect(term.signal.reason).toBeInstanceOf(ClientClosedError);
    const started = performance.now();
    const next = await other.election('crash', { termMs: 400 }).campaign({ value: 'alive' });
    expect(performance.now() - started).toBeLessThan(400 + 5_000);
    expect(next.epoch).toBeGreaterThan(term.epoch);
    await next.resign();
  });

  it('a candidate whose process died is skipped, and its value never shown', async () => {
    const [a, c] = await Promise.all([fx.client({ handoffTimeoutMs: 300 }), fx.client({ handoffTimeoutMs: 300 })]);
    const deadRedis = await fx.redis();
    const dead = await fx.client({ handoffTimeoutMs: 300 }, deadRedis);
    dead.on('error', () => {});
    const redis = await fx.redis();
    const queue = a.election('dead-candidate').keys.queue;
    const term = await a.election('dead-candidate').campaign({ value: 'a' });
    void dead.election('dead-candidate').campaign({ value: 'dead' }).catch(() => undefined);
    await waitFor(async () => (await redis.llen(queue)) === 1);
    const next = c.election('dead-candidate').campaign({ value: 'c' });
    await waitFor(async () => (await redis.llen(queue)) === 2);
    // The process dies: its connections drop, its queue entry stays until it lapses.
    deadRedis.disconnect();
    await term.resign();
    const seen = new Set<string | null>();
    let elected = false;
    // A failed campaign ends the loop too (the await below then reports it), rather than a derived unhandled rejection and a hang.
    void next.then(
      () => (elected = true),
      () => (elected = true),
    );
    while (!elected) {
      seen.add((await a.election('dead-candidate').leader())?.value ?? null);
      await delay(20);
    }
    expect((await next).value).toBe('c');
    expect(seen.has('dead')).toBe(false);
    await (await next).resign();
  });

  it('leaves data it did not write alone: KeyConflictError', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const election = locks.election('foreign');
    await redis.set(election.keys.lock, 'not ours');
    await expect(election.campaign({ value: 'v', waitMs: 200 })).rejects.toMatchObject({ code: 'ERR_KEY_CONFLICT' });
    await expect(election.leader()).rejects.toMatchObject({ code: 'ERR_KEY_CONFLICT' });
    expect(await redis.get(election.keys.lock)).toBe('not ours');
    await redis.del(election.keys.lock);
  });

  it('leaves data it did not write at the candidate queue or table alone: KeyConflictError, and a resignation still ends the term', async () => {
    const [leader, candidate] = await Promise.all([fx.client(), fx.client()]);
    const redis = await fx.redis();
    for (const [name, plant, read] of [
      ['foreign-queue', (key: string) => redis.hset(key, 'not', 'ours'), (key: string) => redis.hgetall(key)],
      ['foreign-table', (key: string) => redis.set(key, 'not ours'), (key: string) => redis.get(key)],
    ] as const) {
      const election = leader.election(name);
      const key = name === 'foreign-queue' ? election.keys.queue : election.keys.waiters;
      const term = await election.campaign({ value: 'l' });
      await plant(key);
      const before = await read(key);
      // Queued behind a term, or handed a free one: either would write there.
      await expect(candidate.election(name).campaign({ value: 'c', waitMs: 200 })).rejects.toMatchObject({ code: 'ERR_KEY_CONFLICT' });
      await term.resign();
      expect(await leader.election(name).leader()).toBeNull();
      await expect(candidate.election(name).campaign({ value: 'c', waitMs: 200 })).rejects.toMatchObject({ code: 'ERR_KEY_CONFLICT' });
      expect(await read(key)).toEqual(before);
      expect(await redis.pttl(key)).toBe(-1);
      await redis.del(key);
    }
  });

  it('close({ release: true }) resigns, and the next candidate leads', async () => {
    const [a, b] = await Promise.all([fx.client(), fx.client()]);
    const term = await a.election('close-release').campaign({ value: 'a' });
    const next = b.election('close-release').campaign({ value: 'b' });
    const redis = await fx.redis();
    await waitFor(async () => (await redis.llen(a.election('close-release').keys.queue)) === 1);
    await a.close({ release: true });
    expect(term.signal.reason).toBeInstanceOf(ClientClosedError);
    expect((await next).value).toBe('b');
  });

  it('emits acquired, released and lost with kind election', async () => {
    const locks = await fx.client();
    const events: (AcquiredEvent | ReleasedEvent | LostEvent)[] = [];
    locks.on('acquired', (e) => events.push(e));
    locks.on('released', (e) => events.push(e));
    locks.on('lost', (e) => events.push(e));
    const election = locks.election('events');
    const term = await election.campaign({ value: 'v' });
    await term.resign();
    const lost = await election.campaign({ value: 'v' });
    await (await fx.redis()).del(election.keys.lock);
    await expect(lost.proclaim('w')).rejects.toBeInstanceOf(LeadershipLostError);
    expect(events.map((e) => [e.kind, e.token])).toEqual([
      ['election', term.epoch],
      ['election', term.epoch],
      ['election', lost.epoch],
      ['election', lost.epoch],
    ]);
    expect((events[3] as LostEvent).reason).toBe('deleted');
  });

  it('traces campaigns, resignations and losses with kind election', async () => {
    const locks = await fx.client();
    const seen: string[] = [];
    const onAcquire = (m: unknown) => seen.push(`acquire ${(m as AcquireMessage).kind}`);
    const onRelease = (m: unknown) => seen.push(`release ${(m as ReleaseMessage).kind}`);
    const onLost = (m: unknown) => seen.push(`lost ${(m as LostMessage).kind} ${(m as LostMessage).reason}`);
    subscribe(`tracing:${TELEMETRY_CHANNELS.acquire}:start`, onAcquire);
    subscribe(`tracing:${TELEMETRY_CHANNELS.release}:start`, onRelease);
    subscribe(TELEMETRY_CHANNELS.lost, onLost);
    try {
      const election = locks.election('traced');
      await (await election.campaign({ value: 'v' })).resign();
      const term = await election.campaign({ value: 'v' });
      await (await fx.redis()).del(election.keys.lock);
      await expect(term.proclaim('w')).rejects.toBeInstanceOf(LeadershipLostError);
    } finally {
      unsubscribe(`tracing:${TELEMETRY_CHANNELS.acquire}:start`, onAcquire);
      unsubscribe(`tracing:${TELEMETRY_CHANNELS.release}:start`, onRelease);
      unsubscribe(TELEMETRY_CHANNELS.lost, onLost);
    }
    expect(seen).toEqual(['acquire election', 'release election', 'acquire election', 'lost election deleted']);
  });

  it('observe yields the leader, every change, and a leader that vanished', async () => {
    const [a, b, watcher] = await Promise.all([fx.client(), fx.client(), fx.client()]);
    const seen: (Leader | null)[] = [];
    const controller = new AbortController();
    const done = (async () => {
      for await (const leader of watcher.election('observe').observe({ signal: controller.signal })) seen.push(leader);
    })();
    await waitFor(() => seen.length === 1);
    expect(seen[0]).toBeNull();
    const termA = await a.election('observe', { termMs: 600 }).campaign({ value: 'a' });
    await waitFor(() => seen.length === 2);
    await termA.proclaim('a2');
    await waitFor(() => seen.length === 3);
    await termA.resign();
    await waitFor(() => seen.length === 4);
    const termB = await b.election('observe', { termMs: 600 }).campaign({ value: 'b' });
    await waitFor(() => seen.length === 5);
    // b's process "crashes": nothing announces it, the observer's timer finds the term gone.
    await b.close();
    await waitFor(() => seen.length === 6, { timeoutMs: 10_000 });
    controller.abort();
    await done;
    expect(seen).toEqual([
      null,
      { value: 'a', epoch: termA.epoch },
      { value: 'a2', epoch: termA.epoch },
      null,
      { value: 'b', epoch: termB.epoch },
      null,
    ]);
  });

  it('a term renews itself without a watchdog, well past its length', async () => {
    const locks = await fx.client();
    // A term no stall of a busy machine outlasts, held for two and a half of its lengths.
    const term = await locks.election('self-renew', { termMs: 1_200 }).campaign({ value: 'v' });
    await delay(3_000);
    expect(term.isLeader).toBe(true);
    expect(await locks.election('self-renew').leader()).toEqual({ value: 'v', epoch: term.epoch });
    await term.resign();
  });
});

