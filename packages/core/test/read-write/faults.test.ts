import type { LockClient } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useProxyFaults } from '../proxy-faults.js';

/** Read-write lock under faults: a dedicated server, a proxy in front of it. */
describe('read-write lock faults', () => {
  const fx = useProxyFaults();
  const throughProxy = (options: { driftFactor?: number } = {}) => fx.throughProxy({ prefix: 'rwf', ...options });

  /** Hold counts per holder kind in Redis, read beside the proxy. */
  async function holds(locks: LockClient, name: string): Promise<string[]> {
    const hash = await fx.admin.hgetall(locks.readWriteLock(name).read.keys.lock);
    return Object.entries(hash)
      .filter(([field]) => field !== '!') // the writer's name, beside its entry
      .map(([, v]) => `${v.split('|')[0]}${v.split('|')[1]}`)
      .sort();
  }

  it('a lost reply after apply leaves the hold counts exact: read, re-entry, downgrade, releases', async () => {
    const locks = await throughProxy();
    const doc = locks.readWriteLock('lost-reply');
    for (let i = 0; i < 10; i++) {
      let dropped = fx.proxy.dropNextReply();
      await doc.write.withLock(async () => {
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['w1']);
        dropped = fx.proxy.dropNextReply();
        const inner = await doc.write.acquire();
        await dropped;
        expect(inner.holdCount).toBe(2);
        expect(await holds(locks, 'lost-reply')).toEqual(['w2']);
        dropped = fx.proxy.dropNextReply();
        await inner.release();
        await dropped;
        dropped = fx.proxy.dropNextReply();
        const read = await doc.read.acquire();
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['r1', 'w1']);
        dropped = fx.proxy.dropNextReply();
        await read.release();
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['w1']);
      });
      expect(await holds(locks, 'lost-reply')).toEqual([]);
      dropped = fx.proxy.dropNextReply();
      await doc.read.withLock(async () => {
        await dropped;
        const inner = await doc.read.acquire();
        expect(inner.holdCount).toBe(2);
        dropped = fx.proxy.dropNextReply();
        await inner.release();
        await dropped;
        expect(await holds(locks, 'lost-reply')).toEqual(['r1']);
      });
      expect(await holds(locks, 'lost-reply')).toEqual([]);
    }
  }, 60_000);

  it('SCRIPT FLUSH breaks nothing', async () => {
    const admin = fx.admin;
    const locks = fx.locks({ prefix: 'rw-flush' });
    const doc = locks.readWriteLock('flushed');
    for (let i = 0; i < 3; i++) {
      await admin.script('FLUSH');
      const read = await doc.read.acquire();
      await admin.script('FLUSH');
      await read.extend(5_000);
      expect(await doc.read.isLocked()).toBe(true);
      await admin.script('FLUSH');
      await read.release();
      await admin.script('FLUSH');
      await doc.write.withLock(async () => {
        await admin.script('FLUSH');
        expect(await doc.write.remainingTtlMs()).toBeGreaterThan(0);
      });
      await admin.script('FLUSH');
      expect(await doc.forceRelease()).toBe(false);
    }
  });

  it('an unreachable server: a read lease is reported lost before the server expires it', async () => {
    // A wide margin (driftFactor 0.25: 502 ms) keeps a busy machine's timer lateness out of it.
    const locks = await throughProxy({ driftFactor: 0.25 });
    const admin = fx.admin;
    const doc = locks.readWriteLock('unreachable');
    const lost: string[] = [];
    let pttlAtLoss = -1;
    const seen = new Promise<void>((resolve, reject) => {
      locks.on('lost', (e) => {
        lost.push(`${e.kind}:${e.reason}`);
        // A failed read fails the test through `seen`, never as an unhandled rejection.
        admin.pttl(doc.read.keys.lock).then((p) => {
          pttlAtLoss = p;
          resolve();
        }, reject);
      });
    });
    locks.on('error', () => undefined);
    await doc.read.acquire({ leaseMs: 2_000 });
    fx.proxy.blackhole(true);
    await seen;
    expect(lost).toEqual(['read:expired']);
    expect(pttlAtLoss).toBeGreaterThan(0);
    fx.proxy.blackhole(false);
    await waitFor(async () => (await admin.exists(doc.read.keys.lock)) === 0, { timeoutMs: 10_000 });
  }, 30_000);
});
