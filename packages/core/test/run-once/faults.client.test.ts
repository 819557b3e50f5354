import { RedisTimeoutError } from '@holdfast/core';
import { clientMode, waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';

/** runOnce under lost replies, slow replies and script cache loss: a dedicated server, a proxy in front of it. */
describe('runOnce faults', () => {
  const fx = useProxyFaults();

  it('a lost reply to a claim: the resend wins once, fn runs once, every other call skips', async () => {
    const locks = await fx.throughProxy({ prefix: 'oncefaults' });
    const rival = fx.locks({ prefix: 'oncefaults' });
    for (let i = 0; i < 10; i++) {
      let runs = 0;
      const dropped = fx.proxy.dropNextReply();
      const outcome = await locks.runOnce(`lost-claim:${i}`, () => ++runs, { ttlMs: 10_000 });
      await dropped;
      expect(outcome).toEqual({ ran: true, result: 1 });
      expect(await rival.runOnce(`lost-claim:${i}`, () => ++runs, { ttlMs: 10_000 })).toEqual({ ran: false });
      expect(await locks.runOnce(`lost-claim:${i}`, () => ++runs, { ttlMs: 10_000 })).toEqual({ ran: false });
      expect(runs).toBe(1);
    }
  }, 60_000);

  it('a lost reply to a renewal keeps the claim', async () => {
    const locks = await fx.throughProxy({ prefix: 'oncerenew' });
    const rival = fx.locks({ prefix: 'oncerenew' });
    const lost: unknown[] = [];
    locks.on('lost', (e) => lost.push(e));
    const outcome = await locks.runOnce('lost-renewal', async (claim) => {
      // The next reply on the connection is a renewal's: nothing else is sent while fn waits.
      await fx.proxy.dropNextReply();
      await fx.proxy.dropNextReply();
      expect(claim.signal.reason).toBeUndefined();
      return (await rival.runOnce('lost-renewal', () => 'twice', { ttlMs: 1_500 })).ran;
    }, { ttlMs: 1_500 });
    expect(outcome).toEqual({ ran: true, result: false });
    expect(lost).toEqual([]);
  }, 30_000);

  it('replies slower than the ttl: fn never runs on a claim that may have expired, and the key is given up', async () => {
    const locks = await fx.throughProxy({ prefix: 'onceslow' });
    const admin = fx.admin;
    fx.proxy.setLatency(150);
    let runs = 0;
    // Each reply comes 300 ms after its claim (150 each way): past a ttl of 200.
    if (clientMode === 'glide') {
      // GLIDE gives up on each attempt at its requestTimeout (250 ms by default), before the reply:
      // the call fails (retried, then RedisTimeoutError); the claims it sent ran all the same, and
      // each expires by its ttl.
      await expect(locks.runOnce('slow', () => ++runs, { ttlMs: 200 })).rejects.toBeInstanceOf(RedisTimeoutError);
      await waitFor(async () => (await admin.keys('onceslow:*once:slow')).length === 0, { message: 'a claim outlived its ttl' });
    } else {
      expect(await locks.runOnce('slow', () => ++runs, { ttlMs: 200 })).toEqual({ ran: false });
      expect(await admin.keys('onceslow:*once:slow')).toEqual([]);
    }
    expect(runs).toBe(0);
    fx.proxy.setLatency(0);
    expect(await locks.runOnce('slow', () => ++runs, { ttlMs: 200 })).toEqual({ ran: true, result: 1 });
  }, 30_000);

  it('SCRIPT FLUSH breaks nothing', async () => {
    const admin = fx.admin;
    const locks = fx.locks({ prefix: 'onceflush' });
    for (let i = 0; i < 3; i++) {
      await admin.script('FLUSH');
      const outcome = await locks.runOnce(`flushed:${i}`, async () => {
        await admin.script('FLUSH');
        // Long enough for a renewal after the flush (every third of the ttl).
        await new Promise((resolve) => setTimeout(resolve, 400));
        return i;
      }, { ttlMs: 1_000 });
      expect(outcome).toEqual({ ran: true, result: i });
      await admin.script('FLUSH');
      expect(await locks.runOnce(`flushed:${i}`, () => -1, { ttlMs: 1_000 })).toEqual({ ran: false });
    }
  });
});
