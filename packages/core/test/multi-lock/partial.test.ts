import { ClientClosedError, LockClient, type MultiLease } from '@holdfast/core';
import { startRedis, waitFor, type RedisServer, differentSlotNames } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/** Two names of different hash slots, in the multi-lock's global order (by slot). */
function orderedPair(locks: LockClient, base: string): [first: string, later: string] {
  const names = differentSlotNames(base, 2).sort((a, b) => locks.lock(a).keys.slot - locks.lock(b).keys.slot);
  return [names[0]!, names[1]!];
}

/** Every part of `lease` is held in Redis by this lease (its token is the lock's current one). */
async function heldInRedis(locks: LockClient, lease: MultiLease): Promise<boolean> {
  const current = await Promise.all(lease.names.map((name) => locks.lock(name).currentToken()));
  return lease.names.every((name, i) => current[i] === lease.tokens.get(name));
}

describe('multi-lock: a lease never holds only some names', () => {
  const fx = useRedis();
  let admin: Redis;
  beforeAll(async () => {
    admin = await fx.redis();
  });

  it('keeps a part taken early held while it waits for a later one longer than that part\'s lease', async () => {
    const x = await fx.client();
    const y = await fx.client();
    const [first, later] = orderedPair(x, 'partial-wait');
    const rival = await y.lock(later).acquire({ leaseMs: 5_000 });
    const acquiring = x.multiLock([later, first]).acquire({ leaseMs: 300, waitMs: 10_000 });
    // `first` is taken, then the call waits for `later`: for more than twice `first`'s lease.
    await waitFor(async () => (await admin.exists(x.lock(first).keys.lock)) === 1);
    await delay(800);
    expect(await x.lock(first).isLocked()).toBe(true);
    await rival.release();
    const lease = await acquiring;
    expect(lease.isHeld).toBe(true);
    expect(lease.signal.aborted).toBe(false);
    expect(await heldInRedis(x, lease)).toBe(true);
    await lease.release();
    expect(await admin.exists(x.lock(first).keys.lock, x.lock(later).keys.lock)).toBe(0);
  });

  it('hands out every part with its full lease ahead, not what was left of the first part\'s', async () => {
    const x = await fx.client();
    const y = await fx.client();
    const [first, later] = orderedPair(x, 'partial-full');
    const rival = await y.lock(later).acquire({ leaseMs: 5_000 });
    const acquiring = x.multiLock([first, later]).acquire({ leaseMs: 3_000, waitMs: 10_000 });
    await waitFor(async () => (await admin.exists(x.lock(first).keys.lock)) === 1);
    // Long enough for `first` to have used up a good part of its lease.
    await delay(1_200);
    await rival.release();
    const lease = await acquiring;
    // Every part is held for its whole lease from when the lease was handed out: the part taken
    // first was brought back to it, and so was the one handed over (a hand-off grants a short claim).
    const pttls = await Promise.all([admin.pttl(x.lock(first).keys.lock), admin.pttl(x.lock(later).keys.lock)]);
    expect(Math.min(...pttls)).toBeGreaterThan(2_400);
    await lease.release();
  });

  it('release() and extend() after close() reject with ClientClosedError', async () => {
    const x = await fx.client();
    const lease = await x.multiLock(differentSlotNames('partial-closed', 2)).acquire();
    await x.close();
    await expect(lease.release()).rejects.toBeInstanceOf(ClientClosedError);
    await expect(lease.extend()).rejects.toBeInstanceOf(ClientClosedError);
  });
});

describe('multi-lock: parts lost while waiting (server frozen)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());

  it('withLock never runs its callback on a lease missing a part', async () => {
    const x = new LockClient(server.client({ commandTimeout: 200 }), { prefix: 'frz', commandTimeoutMs: 200 });
    const y = new LockClient(server.client(), { prefix: 'frz' });
    x.on('error', () => undefined);
    y.on('error', () => undefined);
    const [first, later] = orderedPair(x, 'partial-frozen');
    const rival = await y.lock(later).acquire({ leaseMs: 1_500 });
    const seen: boolean[] = [];
    const running = x.multiLock([first, later]).withLock(
      async (lease) => {
        seen.push(lease.isHeld && !lease.signal.aborted && (await heldInRedis(x, lease)));
      },
      { leaseMs: 300, waitMs: 20_000 },
    );
    await waitFor(async () => (await x.lock(first).isLocked()));
    // Frozen past `first`'s lease: nobody can renew it; Redis expires it on resume.
    server.pause();
    await delay(700);
    server.resume();
    await running;
    expect(seen).toEqual([true]);
    void rival;
    await x.close();
    await y.close();
  });
});
