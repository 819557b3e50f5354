import { channel, tracingChannel } from 'node:diagnostics_channel';
import {
  ClientClosedError,
  InvalidArgumentError,
  KeyConflictError,
  LockLostError,
  ReplicationError,
  TELEMETRY_CHANNELS,
  type AcquiredEvent,
  type AcquireMessage,
  type ReleasedEvent,
  type ReleaseMessage,
  type LostEvent,
  type LostMessage,
  type RunOnceClaim,
} from '@holdfast/core';
import { blockEventLoop, commandStats, commandStatsDelta, waitFor } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/** `runOnce` and the node-cron run coordinator on one server, several clients standing for processes. */
describe('runOnce', () => {
  const fx = useRedis();

  /** The claim key of `key` under the fixture's prefix (found by its documented shape, not computed). */
  async function claimKey(admin: Redis, key: string): Promise<string | undefined> {
    const found = await admin.keys(`${fx.prefix}:{*}:once:${key}`);
    expect(found.length).toBeLessThanOrEqual(1);
    return found[0];
  }

  it('runs fn in exactly one of many concurrent calls, and the others skip', async () => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => fx.client()));
    let runs = 0;
    const outcomes = await Promise.all(
      clients.flatMap((locks) =>
        [1, 2].map(() =>
          locks.runOnce('report:2026-01-01T00:00', async () => {
            runs++;
            await delay(20);
            return 'sent';
          }, { ttlMs: 10_000 }),
        ),
      ),
    );
    expect(runs).toBe(1);
    expect(outcomes.filter((o) => o.ran)).toEqual([{ ran: true, result: 'sent' }]);
    expect(outcomes.filter((o) => !o.ran)).toHaveLength(9);
    for (const skipped of outcomes.filter((o) => !o.ran)) expect(skipped).toEqual({ ran: false });
  });

  it('keeps the key claimed for ttlMs from the start, then lets the next call run', async () => {
    const admin = await fx.redis();
    const [a, b] = [await fx.client(), await fx.client()];
    const first = await a.runOnce('short', () => 1, { ttlMs: 1_000 });
    expect(first).toEqual({ ran: true, result: 1 });
    const key = (await claimKey(admin, 'short'))!;
    const pttl = await admin.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(1_000);
    expect(await b.runOnce('short', () => 2, { ttlMs: 1_000 })).toEqual({ ran: false });
    await waitFor(async () => (await admin.exists(key)) === 0, { timeoutMs: 5_000 });
    expect(await b.runOnce('short', () => 2, { ttlMs: 1_000 })).toEqual({ ran: true, result: 2 });
  });

  it('renews the claim for as long as fn runs, past its ttl', async () => {
    const admin = await fx.redis();
    const [a, b] = [await fx.client(), await fx.client()];
    let renewals = 0;
    let skips = 0;
    const outcome = await a.runOnce('long', async (claim) => {
      const key = (await claimKey(admin, 'long'))!;
      // Three renewals seen from outside (the ttl going up again), the claim held throughout.
      let last = await admin.pttl(key);
      while (renewals < 3) {
        await delay(20);
        const pttl = await admin.pttl(key);
        expect(pttl).toBeGreaterThan(0);
        if (pttl > last) renewals++;
        last = pttl;
        if (!(await b.runOnce('long', () => 'twice', { ttlMs: 900 })).ran) skips++;
      }
      expect(claim.signal.aborted).toBe(false);
      return 'done';
    }, { ttlMs: 900 });
    expect(outcome).toEqual({ ran: true, result: 'done' });
    expect(renewals).toBe(3);
    expect(skips).toBeGreaterThan(0);
  });

  it("rejects with fn's error, and the key stays claimed", async () => {
    const admin = await fx.redis();
    const [a, b] = [await fx.client(), await fx.client()];
    const failure = new Error('report failed');
    await expect(a.runOnce('failing', () => Promise.reject(failure), { ttlMs: 10_000 })).rejects.toBe(failure);
    await expect(a.runOnce('failing-sync', () => { throw failure; }, { ttlMs: 10_000 })).rejects.toBe(failure);
    expect(await admin.pttl((await claimKey(admin, 'failing'))!)).toBeGreaterThan(0);
    let ran = false;
    expect(await b.runOnce('failing', () => { ran = true; }, { ttlMs: 10_000 })).toEqual({ ran: false });
    expect(ran).toBe(false);
  });

  it('gives fn the key, a fencing token above every earlier one of its slot, and a signal', async () => {
    const locks = await fx.client();
    const seen: RunOnceClaim[] = [];
    await locks.runOnce('tokens', (claim) => seen.push(claim), { ttlMs: 10_000 });
    const lease = await locks.lock('tokens').acquire();
    await lease.release();
    await locks.runOnce('tokens-2', (claim) => seen.push(claim), { ttlMs: 10_000 });
    expect(seen[0]!.key).toBe('tokens');
    expect(seen[0]!.token).toBeGreaterThan(0);
    expect(seen[0]!.signal.aborted).toBe(false);
    // The same name's lock shares the slot's counter: its token is greater.
    expect(lease.token).toBeGreaterThan(seen[0]!.token);
  });

  it('uses the client’s leaseMs when ttlMs is not given', async () => {
    const admin = await fx.redis();
    const locks = await fx.client({ leaseMs: 7_000 });
    await locks.runOnce('default-ttl', () => undefined);
    const pttl = await admin.pttl((await claimKey(admin, 'default-ttl'))!);
    expect(pttl).toBeGreaterThan(5_000);
    expect(pttl).toBeLessThanOrEqual(7_000);
  });

  it('refuses bad input with InvalidArgumentError, before any I/O', async () => {
    const locks = await fx.client();
    const fn = () => 1;
    const bad: [unknown, unknown, unknown][] = [
      ['', fn, undefined],
      [42, fn, undefined],
      ['k', 'not a function', undefined],
      ['k', fn, 'options'],
      ['k', fn, { ttlMs: 0 }],
      ['k', fn, { ttlMs: -5 }],
      ['k', fn, { ttlMs: 1.5 }],
      ['k', fn, { ttlMs: '1000' }],
      ['k', fn, { ttlMs: 2 ** 31 }],
    ];
    for (const [key, f, options] of bad) {
      await expect(locks.runOnce(key as string, f as () => void, options as { ttlMs: number })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    await expect(locks.runOnce('k', fn, { ttlMs: 0 })).rejects.toThrow('Expected `ttlMs` to be a positive integer, got `0`');
    const coordinator = locks.runCoordinator();
    await expect(coordinator.shouldRun('job:1', 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(coordinator.shouldRun('', 1_000)).rejects.toBeInstanceOf(InvalidArgumentError);
    const admin = await fx.redis();
    expect(await claimKey(admin, 'k')).toBeUndefined();
    expect(await claimKey(admin, 'job:1')).toBeUndefined();
  });

  it('never touches a key holding data it did not write', async () => {
    const admin = await fx.redis();
    const locks = await fx.client();
    // Find the claim key's name first, then put foreign data there.
    await locks.runOnce('foreign', () => undefined, { ttlMs: 50 });
    const key = (await claimKey(admin, 'foreign'))!;
    await admin.set(key, 'user data');
    await expect(locks.runOnce('foreign', () => undefined, { ttlMs: 1_000 })).rejects.toBeInstanceOf(KeyConflictError);
    await admin.del(key);
    await admin.hset(key, 'field', 'value');
    await expect(locks.runOnce('foreign', () => undefined, { ttlMs: 1_000 })).rejects.toBeInstanceOf(KeyConflictError);
    expect(await admin.hgetall(key)).toEqual({ field: 'value' });
    expect(await admin.pttl(key)).toBe(-1);
  });

  it('minReplicas: a claim too few replicas acknowledged is dropped, and fn does not run', async () => {
    const admin = await fx.redis();
    // The shared server has no replica: WAIT acknowledges none.
    const locks = await fx.client({ minReplicas: 1, replicaTimeoutMs: 50 });
    let ran = false;
    const error = await locks.runOnce('replicated', () => { ran = true; }, { ttlMs: 10_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReplicationError);
    expect(error).toMatchObject({ acknowledged: 0, required: 1 });
    expect(ran).toBe(false);
    expect(await claimKey(admin, 'replicated')).toBeUndefined();
  });

  it('emits acquired (kind run-once) where fn runs and released when it ends, nothing where it skips', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const events: [string, AcquiredEvent | ReleasedEvent][] = [];
    for (const c of [a, b]) {
      c.on('acquired', (e) => events.push(['acquired', e]));
      c.on('released', (e) => events.push(['released', e]));
    }
    await a.runOnce('events', () => undefined, { ttlMs: 10_000 });
    await b.runOnce('events', () => undefined, { ttlMs: 10_000 });
    const token = expect.any(Number);
    expect(events).toEqual([
      ['acquired', { name: 'events', token, holdCount: 1, waitedMs: expect.any(Number), reentrant: false, kind: 'run-once' }],
      ['released', { name: 'events', token, holdCount: 0, kind: 'run-once' }],
    ]);
  });

  it('traces claims on holdfast:acquire and their end on holdfast:release', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const acquires: AcquireMessage[] = [];
    const releases: ReleaseMessage[] = [];
    const ignore = () => undefined;
    const phases = { start: ignore, end: ignore, asyncStart: ignore, error: ignore };
    const onAcquire = { ...phases, asyncEnd: (m: AcquireMessage) => void acquires.push(m) };
    const onRelease = { ...phases, asyncEnd: (m: ReleaseMessage) => void releases.push(m) };
    const acquireChannel = tracingChannel<unknown, AcquireMessage>(TELEMETRY_CHANNELS.acquire);
    const releaseChannel = tracingChannel<unknown, ReleaseMessage>(TELEMETRY_CHANNELS.release);
    acquireChannel.subscribe(onAcquire);
    releaseChannel.subscribe(onRelease);
    try {
      await a.runOnce('traced', () => delay(10), { ttlMs: 10_000 });
      await b.runOnce('traced', () => undefined, { ttlMs: 10_000 });
    } finally {
      acquireChannel.unsubscribe(onAcquire);
      releaseChannel.unsubscribe(onRelease);
    }
    expect(acquires).toMatchObject([
      { name: 'traced', kind: 'run-once', mode: 'try', clientId: a.id, result: { token: expect.any(Number) } },
      { name: 'traced', kind: 'run-once', mode: 'try', clientId: b.id, result: null },
    ]);
    expect(releases).toHaveLength(1);
    expect(releases[0]).toMatchObject({ name: 'traced', kind: 'run-once', clientId: a.id, final: true, acquire: acquires[0] });
    expect(releases[0]!.heldMs).toBeGreaterThanOrEqual(5);
  });

  it('reports a claim removed while fn runs: signal aborted, lost event and holdfast:lost', async () => {
    const admin = await fx.redis();
    const locks = await fx.client();
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const published: LostMessage[] = [];
    const onLost = (message: unknown) => published.push(message as LostMessage);
    channel(TELEMETRY_CHANNELS.lost).subscribe(onLost);
    try {
      const outcome = await locks.runOnce('removed', async (claim) => {
        await admin.del((await claimKey(admin, 'removed'))!);
        await waitFor(() => claim.signal.aborted, { timeoutMs: 5_000 });
        return claim.signal.reason as unknown;
      }, { ttlMs: 900 });
      expect(outcome.ran).toBe(true);
      const reason = outcome.ran ? outcome.result : undefined;
      expect(reason).toBeInstanceOf(LockLostError);
      expect(reason).toMatchObject({ lockName: 'removed', reason: 'expired' });
      expect(lost).toEqual([{ name: 'removed', token: expect.any(Number), reason: 'expired', error: reason, kind: 'run-once' }]);
      expect(published).toMatchObject([{ name: 'removed', kind: 'run-once', reason: 'expired', clientId: locks.id }]);
    } finally {
      channel(TELEMETRY_CHANNELS.lost).unsubscribe(onLost);
    }
  });

  it('a process frozen past its claim learns it on resume, without waiting for Redis', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const lost: LostEvent[] = [];
    a.on('lost', (e) => lost.push(e));
    const outcome = await a.runOnce('frozen', async (claim) => {
      // A stalled event loop stands for a paused process: no timer runs while it lasts.
      blockEventLoop(700);
      await delay(1);
      const abortedOnResume = claim.signal.aborted;
      // The server expired the claim meanwhile: another process may now run the key.
      const rival = await b.runOnce('frozen', () => 'rival', { ttlMs: 10_000 });
      return { abortedOnResume, reason: claim.signal.reason as unknown, rival };
    }, { ttlMs: 300 });
    expect(outcome).toMatchObject({ ran: true, result: { abortedOnResume: true, rival: { ran: true, result: 'rival' } } });
    expect(outcome.ran && outcome.result.reason).toBeInstanceOf(LockLostError);
    expect(lost).toMatchObject([{ name: 'frozen', reason: 'unreachable', kind: 'run-once' }]);
  });

  it('close() ends a running claim: signal aborted with ClientClosedError, renewals stopped, claim left to expire', async () => {
    const admin = await fx.redis();
    const locks = await fx.client();
    const lost: LostEvent[] = [];
    const released: ReleasedEvent[] = [];
    locks.on('lost', (e) => lost.push(e)).on('released', (e) => released.push(e));
    let closing: Promise<void> | undefined;
    const outcome = await locks.runOnce('closing', async (claim) => {
      closing = locks.close();
      expect(claim.signal.aborted).toBe(true);
      expect(claim.signal.reason).toBeInstanceOf(ClientClosedError);
      return 'finished';
    }, { ttlMs: 900 });
    await closing;
    expect(outcome).toEqual({ ran: true, result: 'finished' });
    expect(lost).toMatchObject([{ name: 'closing', reason: 'closed', kind: 'run-once' }]);
    expect(released).toEqual([]);
    const key = (await claimKey(admin, 'closing'))!;
    // No renewal after close(): no script call reaches the server while the claim runs out.
    const before = await commandStats(admin);
    await waitFor(async () => (await admin.exists(key)) === 0, { timeoutMs: 5_000 });
    const delta = commandStatsDelta(before, await commandStats(admin));
    expect((delta.evalsha ?? 0) + (delta.eval ?? 0)).toBe(0);
    await expect(locks.runOnce('closing', () => undefined)).rejects.toBeInstanceOf(ClientClosedError);
    expect(() => locks.runCoordinator()).toThrow(ClientClosedError);
  });

  it('runCoordinator: one process per key; onComplete stops renewal and the key stays claimed until its ttl', async () => {
    const admin = await fx.redis();
    const coordinators = await Promise.all([fx.client(), fx.client(), fx.client()]).then((cs) => cs.map((c) => c.runCoordinator()));
    const won = await Promise.all(coordinators.map((c) => c.shouldRun('report:2026-01-01T10:00:00.000Z', 900)));
    expect(won.filter(Boolean)).toHaveLength(1);
    const winner = coordinators[won.indexOf(true)]!;
    const key = (await claimKey(admin, 'report:2026-01-01T10:00:00.000Z'))!;
    // Renewed while the task runs: the ttl goes up again.
    let last = await admin.pttl(key);
    await waitFor(async () => {
      const pttl = await admin.pttl(key);
      const renewed = pttl > last;
      last = pttl;
      return renewed;
    }, { timeoutMs: 5_000 });
    winner.onComplete('report:2026-01-01T10:00:00.000Z');
    winner.onComplete('never-claimed');
    expect(await admin.pttl(key)).toBeGreaterThan(0);
    expect(await Promise.all(coordinators.map((c) => c.shouldRun('report:2026-01-01T10:00:00.000Z', 900)))).toEqual([false, false, false]);
    await waitFor(async () => (await admin.exists(key)) === 0, { timeoutMs: 5_000 });
  });

  it('keys go under the ioredis keyPrefix and the client prefix', async () => {
    const admin = await fx.redis();
    const prefix = `${fx.prefix}p`;
    // An ioredis client of its own: the keyPrefix is ioredis's option (this file runs in the ioredis pass).
    const redis = (await fx.server()).client({ keyPrefix: 'app:' });
    try {
      const locks = await fx.client({ prefix }, redis);
      expect(await locks.runOnce('prefixed', () => 'ran', { ttlMs: 10_000 })).toEqual({ ran: true, result: 'ran' });
      const keys = await admin.keys(`*${prefix}:*once:prefixed`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(new RegExp(`^app:${prefix}:\\{[0-9a-z]+\\}:once:prefixed$`));
      expect(await locks.runOnce('prefixed', () => 'twice', { ttlMs: 10_000 })).toEqual({ ran: false });
      await locks.close();
    } finally {
      redis.disconnect();
    }
  });
});
