import { LockLostError } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';

/** Idempotency keys under lost replies: a dedicated server, a proxy in front of it. */
describe('idempotency faults', () => {
  const fx = useProxyFaults();

  it('a lost reply to the claim and to the store: fn runs once, the result is stored once, every duplicate replays it', async () => {
    const locks = await fx.throughProxy({ prefix: 'idemfaults' });
    const rival = fx.locks({ prefix: 'idemfaults' });
    const stored: unknown[] = [];
    // The client's first commands (the server check) are sent before the loop.
    await locks.idempotency('warm').run('up', () => 0);
    for (let i = 0; i < 5; i++) {
      let runs = 0;
      const dropped = fx.proxy.dropNextReply();
      const outcome = await locks.idempotency('pay').run(`k${i}`, async () => {
        await dropped;
        // The next command on the connection is the store: its reply is lost, and it is resent.
        void fx.proxy.dropNextReply().then(() => stored.push(i));
        return ++runs;
      });
      expect(outcome).toMatchObject({ value: 1, replayed: false });
      expect(await rival.idempotency('pay').run(`k${i}`, () => ++runs)).toMatchObject({ value: 1, replayed: true, token: outcome.token });
      expect(await locks.idempotency('pay').run(`k${i}`, () => ++runs)).toMatchObject({ value: 1, replayed: true, token: outcome.token });
      expect(runs).toBe(1);
    }
    expect(stored).toEqual([0, 1, 2, 3, 4]);
  }, 60_000);

  it('Redis restarted empty mid-run: the claim is reported lost, nothing is stored, and the next call runs fn', async () => {
    const locks = fx.locks({ prefix: 'idemrestart' });
    const other = fx.locks({ prefix: 'idemrestart' });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let signal: AbortSignal | undefined;
    const first = locks
      .idempotency('pay', { leaseMs: 600 })
      .run('r', async (claim) => {
        signal = claim.signal;
        await gate;
        return 'first';
      })
      .catch((e: unknown) => e);
    await waitFor(() => signal !== undefined);
    await fx.server.kill();
    await fx.server.restart();
    // The next renewal finds the claim gone.
    await waitFor(() => signal!.aborted, { timeoutMs: 20_000 });
    open();
    expect(await first).toBeInstanceOf(LockLostError);
    expect(await other.idempotency('pay').get('r')).toBeNull();
    expect(await other.idempotency('pay').run('r', () => 'second')).toMatchObject({ value: 'second', replayed: false });
  }, 60_000);
});
