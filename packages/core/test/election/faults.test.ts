import { LeadershipLostError, LockClient, type LostEvent, type ReleasedEvent } from '@holdfast/core';
import { Watchdog } from '@holdfast/watchdog';
import { uniqueName, useProxiedServer, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay } from '../helpers.js';

/** Lost replies, a hung server and renewal by the watchdog, on a server of this file's own. */
describe('election under faults', () => {
  const fx = useProxiedServer();

  it('a resignation whose reply was lost (resent by the client) ends the term once, and the next candidate leads', async () => {
    const prefix = uniqueName('el-resend');
    const viaProxy = fx.throughProxy();
    const direct = fx.server.client();
    const leader = new LockClient(viaProxy, { prefix });
    const candidate = new LockClient(direct, { prefix });
    const events: (LostEvent | ReleasedEvent)[] = [];
    leader.on('lost', (e) => events.push(e));
    leader.on('released', (e) => events.push(e));
    try {
      // Load the scripts first, so the dropped reply is the applied resignation, not a NOSCRIPT.
      await (await leader.election('warm-up').campaign({ value: 'w' })).resign();
      const term = await leader.election('resend').campaign({ value: 'leader' });
      const next = candidate.election('resend').campaign({ value: 'next' });
      await waitFor(async () => (await direct.exists(candidate.election('resend').keys.queue)) === 1);
      const dropped = fx.proxy.dropNextReply();
      await term.resign();
      await dropped;
      const nextTerm = await next;
      expect(term.isLeader).toBe(false);
      expect(events.filter((e) => e.name === 'resend').map((e) => ('reason' in e ? `lost ${e.reason}` : 'released'))).toEqual(['released']);
      expect(await candidate.election('resend').leader()).toEqual({ value: 'next', epoch: nextTerm.epoch });
      await nextTerm.resign();
    } finally {
      await leader.close();
      await candidate.close();
      viaProxy.disconnect();
      direct.disconnect();
    }
  });

  it('a campaign whose granting reply was lost is elected once, with the epoch Redis shows', async () => {
    const prefix = uniqueName('el-grant');
    const viaProxy = fx.throughProxy();
    const locks = new LockClient(viaProxy, { prefix });
    try {
      await (await locks.election('warm-up').campaign({ value: 'w' })).resign();
      const dropped = fx.proxy.dropNextReply();
      const term = await locks.election('grant').campaign({ value: 'v' });
      await dropped;
      expect(await locks.election('grant').leader()).toEqual({ value: 'v', epoch: term.epoch });
      await term.resign();
      expect(await locks.election('grant').leader()).toBeNull();
    } finally {
      await locks.close();
      viaProxy.disconnect();
    }
  });

  it('a resignation sent while Redis cannot be reached is sent again until it ends the term', async () => {
    const prefix = uniqueName('el-hang');
    const redis = fx.throughProxy();
    const locks = new LockClient(redis, { prefix, commandTimeoutMs: 100, retries: 1 });
    locks.on('error', () => {});
    try {
      const term = await locks.election('hang', { termMs: 10_000 }).campaign({ value: 'v' });
      fx.proxy.blackhole(true);
      const resigned = term.resign();
      await delay(400);
      // Still out: the term may hold on the server, so it is held here too.
      expect(term.isLeader).toBe(true);
      fx.proxy.blackhole(false);
      fx.proxy.resetAll();
      await resigned;
      expect(term.isLeader).toBe(false);
      expect(await locks.election('hang').leader()).toBeNull();
    } finally {
      fx.proxy.blackhole(false);
      await locks.close();
      redis.disconnect();
    }
  });

  it('a resignation that cannot reach Redis before the term runs out rejects with LeadershipLostError, and the term ends on the server by itself', async () => {
    const prefix = uniqueName('el-hang-lost');
    const redis = fx.throughProxy();
    const direct = fx.server.client();
    const locks = new LockClient(redis, { prefix, commandTimeoutMs: 100, retries: 1 });
    locks.on('error', () => {});
    try {
      const term = await locks.election('hang', { termMs: 500 }).campaign({ value: 'v' });
      const observed = locks.election('hang').keys.lock;
      fx.proxy.blackhole(true);
      const outcome = await term.resign().then(
        () => 'resolved',
        (error: unknown) => error,
      );
      expect(outcome).toBeInstanceOf(LeadershipLostError);
      expect(term.signal.reason).toBeInstanceOf(LeadershipLostError);
      expect(term.isLeader).toBe(false);
      // The term runs out on the server by itself.
      await waitFor(async () => (await direct.exists(observed)) === 0, { timeoutMs: 5_000 });
    } finally {
      fx.proxy.blackhole(false);
      fx.proxy.resetAll();
      await locks.close();
      redis.disconnect();
      direct.disconnect();
    }
  });

  it('runs again after SCRIPT FLUSH: campaign, hand-off, proclaim, leader and resign', async () => {
    const prefix = uniqueName('el-flush');
    const [ra, rb] = [fx.server.client(), fx.server.client()];
    const [a, b] = [new LockClient(ra, { prefix }), new LockClient(rb, { prefix })];
    try {
      await (await a.election('warm-up').campaign({ value: 'w' })).resign();
      await ra.script('FLUSH');
      const term = await a.election('flush').campaign({ value: 'a' });
      const next = b.election('flush').campaign({ value: 'b' });
      await waitFor(async () => (await ra.llen(a.election('flush').keys.queue)) === 1);
      await ra.script('FLUSH');
      await term.proclaim('a2');
      expect(await b.election('flush').leader()).toEqual({ value: 'a2', epoch: term.epoch });
      await ra.script('FLUSH');
      await term.resign();
      const second = await next;
      await ra.script('FLUSH');
      await second.resign();
      expect(await a.election('flush').leader()).toBeNull();
    } finally {
      await a.close();
      await b.close();
      ra.disconnect();
      rb.disconnect();
    }
  });

  it('the watchdog renews a term of its timeout; a shorter term renews itself; both are reported lost when Redis hangs', async () => {
    const prefix = uniqueName('el-dog');
    const redis = fx.server.client();
    const locks = new LockClient(redis, { prefix, commandTimeoutMs: 100 });
    locks.on('error', () => {});
    const dog = new Watchdog(locks, { timeoutMs: 600 });
    dog.on('error', () => {});
    try {
      const byDog = await locks.election('dog').campaign({ value: 'dog' });
      const bySelf = await locks.election('self', { termMs: 300 }).campaign({ value: 'self' });
      expect(dog.watchedCount).toBe(1);
      await delay(1_200);
      expect(byDog.isLeader && bySelf.isLeader).toBe(true);
      const lostAt: Record<string, number> = {};
      byDog.signal.addEventListener('abort', () => (lostAt.dog = performance.now()));
      bySelf.signal.addEventListener('abort', () => (lostAt.self = performance.now()));
      await fx.server.pause();
      const pausedAt = performance.now();
      try {
        await waitFor(() => !byDog.isLeader && !bySelf.isLeader, { timeoutMs: 5_000 });
      } finally {
        await fx.server.resume();
      }
      expect(lostAt.dog).toBeGreaterThan(pausedAt);
      expect(lostAt.self).toBeGreaterThan(pausedAt);
      expect(byDog.signal.reason).toBeInstanceOf(LeadershipLostError);
      expect((bySelf.signal.reason as LeadershipLostError).reason).toBe('expired');
    } finally {
      await dog.stop();
      await locks.close();
      redis.disconnect();
    }
  });
});
