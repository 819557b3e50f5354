import { barrierScripts } from '../../src/barrier/barrier-calls.js';
import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';

/**
 * Lost replies (the command ran, its reply was dropped and the connection
 * closed, so the client sends it again) and script cache loss, for the latch
 * and the barrier: every resend is recognised by its request id.
 */
describe('latch and barrier under lost replies', () => {
  const fx = useProxyFaults();

  it('a count-down resent after a lost reply is counted once, and resolves to the count its first run left', async () => {
    // No wait on this client: no pub/sub connection whose messages could take the drop.
    const locks = await fx.throughProxy({ prefix: 'latchfaults' });
    const latch = locks.countDownLatch('resent');
    let dropped = fx.proxy.dropNextReply();
    expect(await latch.trySetCount(5)).toBe(true);
    await dropped;
    expect(await fx.admin.hget(latch.keys.latch, 'n')).toBe('5');
    for (const expected of [4, 3, 2, 1, 0]) {
      dropped = fx.proxy.dropNextReply();
      expect(await latch.countDown()).toBe(expected);
      await dropped;
      expect(await fx.admin.hget(latch.keys.latch, 'n')).toBe(String(expected));
    }
    // At 0, a count-down is not recorded, and its resend does nothing either.
    dropped = fx.proxy.dropNextReply();
    expect(await latch.countDown()).toBe(0);
    await dropped;
    expect(await latch.count()).toBe(0);
  }, 60_000);

  it('an arrival or a leave sent twice (a resend after a lost reply) acts once, and gets the first answer', async () => {
    // At the script: a client's resends race its pub/sub connection's messages through the proxy.
    const keys = fx.locks({ prefix: 'barscript' }).barrier('resent', { parties: 2 }).keys;
    const send = (operation: keyof typeof barrierScripts, party: string, ...args: (string | number)[]) =>
      fx.admin.eval(barrierScripts[operation].source, 3, keys.barrier, keys.parties, keys.records, party, keys.channel, ...args) as Promise<unknown[]>;
    const arrive = (party: string) => send('arrive', party, 5_000, 2, 10_000);
    const waiting = await arrive('party-a');
    expect(waiting).toEqual([0, 0, -1]);
    expect(await arrive('party-a')).toEqual([0, 0, -1]);
    expect(await fx.admin.zcount(keys.parties, '-inf', '(inf')).toBe(1);
    expect(await arrive('party-b')).toEqual([1, 0]);
    expect(await arrive('party-b')).toEqual([1, 0]);
    expect(await arrive('party-a')).toEqual([1, 0]);
    expect(await send('wait', 'party-a', 5_000, 10_000)).toEqual([1, 0]);
    // Neither resend counted in the next generation.
    expect(await fx.admin.zcount(keys.parties, '-inf', '(inf')).toBe(0);
    expect(await arrive('party-c')).toEqual([0, 1, -1]);
    expect(await send('leave', 'party-c', 'timeout')).toEqual([2, 1, 'timeout', 'party-c']);
    expect(await send('leave', 'party-c', 'timeout')).toEqual([2, 1, 'timeout', 'party-c']);
    expect(await fx.admin.hmget(keys.barrier, 'e', 'g')).toEqual(['2', '1']);
    expect(await send('wait', 'nobody', 5_000, 10_000)).toEqual([3]);
  });

  it('SCRIPT FLUSH breaks nothing', async () => {
    const locks = fx.locks({ prefix: 'flush' });
    const latch = locks.countDownLatch('flushed');
    await fx.admin.script('FLUSH');
    expect(await latch.trySetCount(2)).toBe(true);
    await fx.admin.script('FLUSH');
    expect(await latch.countDown()).toBe(1);
    await fx.admin.script('FLUSH');
    expect(await locks.barrier('flushed', { parties: 1 }).arrive()).toEqual({ generation: 0 });
  });
});
