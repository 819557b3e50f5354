import {
  ClientClosedError,
  InvalidArgumentError,
  KeyConflictError,
  LockLostError,
  LockNotHeldError,
  LockTimeoutError,
  MultiLockReleaseError,
  type AcquiredEvent,
  type LockClient,
  type LostEvent,
} from '@holdfast/core';
import { lockFields, waitFor, differentSlotNames, sameSlotNames } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

describe('multi-lock', () => {
  const fx = useRedis();
  let admin: Redis;
  beforeAll(async () => {
    admin = await fx.redis();
  });
  const held = async (locks: LockClient, names: readonly string[]) =>
    Promise.all(names.map((name) => admin.exists(locks.lock(name).keys.lock)));

  // Both layouts: one group taken by one script call, and one group per name taken in order.
  for (const [layout, namesOf] of [
    ['one hash slot', sameSlotNames],
    ['different hash slots', differentSlotNames],
  ] as const) {
    describe(layout, () => {
      it('takes every name, with one token per name, and releases every one', async () => {
        const locks = await fx.client();
        const names = namesOf(`all-${layout}`, 3);
        const multi = locks.multiLock(names);
        const lease = await multi.acquire();
        expect(lease.names).toEqual(names);
        expect([...lease.tokens.keys()]).toEqual(names);
        expect(lease.isHeld).toBe(true);
        expect(lease.leaseMs).toBe(30_000);
        expect(await held(locks, names)).toEqual([1, 1, 1]);
        for (const name of names) expect(await locks.lock(name).currentToken()).toBe(lease.tokens.get(name));
        expect(await multi.isLocked()).toBe(true);
        expect(await multi.remainingTtlMs()).toBeGreaterThan(20_000);
        await lease.release();
        expect(lease.isHeld).toBe(false);
        expect(await held(locks, names)).toEqual([0, 0, 0]);
        expect(await multi.isLocked()).toBe(false);
        await expect(lease.release()).rejects.toBeInstanceOf(LockNotHeldError);
      });

      it('tryAcquire leaves nothing held when one name is busy', async () => {
        const locks = await fx.client();
        const rival = await fx.client();
        const names = namesOf(`try-${layout}`, 3);
        for (const busy of names) {
          const plain = await rival.lock(busy).acquire();
          expect(await locks.multiLock(names).tryAcquire()).toBeNull();
          expect(await held(locks, names)).toEqual(names.map((n) => (n === busy ? 1 : 0)));
          expect(locks.heldCount).toBe(0);
          await plain.release();
        }
        const lease = await locks.multiLock(names).tryAcquire();
        expect(lease?.isHeld).toBe(true);
        await lease!.release();
      });

      it('a multi-lock and a plain lock on the same name exclude each other', async () => {
        const a = await fx.client();
        const b = await fx.client();
        const names = namesOf(`excl-${layout}`, 2);
        const lease = await a.multiLock(names).acquire();
        expect(await b.lock(names[1]!).tryAcquire()).toBeNull();
        await lease.release();
        const plain = await b.lock(names[0]!).acquire();
        expect(await a.multiLock(names).tryAcquire()).toBeNull();
        await plain.release();
      });

      it('waits for a busy name through the hand-off, not by sleeping out its lease', async () => {
        const locks = await fx.client();
        const rival = await fx.client();
        const names = namesOf(`wait-${layout}`, 3);
        // A 10-minute lease: only a wake-up can end this wait within waitMs.
        const plain = await rival.lock(names[1]!).acquire({ leaseMs: 600_000 });
        const waiting = locks.multiLock(names).acquire({ waitMs: 20_000 });
        await waitFor(async () => (await admin.llen(locks.lock(names[1]!).keys.queue)) === 1);
        await plain.release();
        const lease = await waiting;
        expect(lease.isHeld).toBe(true);
        expect(lease.tokens.get(names[1]!)).toBeGreaterThan(plain.token);
        await lease.release();
        expect(await held(locks, names)).toEqual([0, 0, 0]);
      });

      it('waitMs running out gives back every name taken, and names the busy one', async () => {
        const locks = await fx.client();
        const rival = await fx.client();
        const names = namesOf(`timeout-${layout}`, 3);
        // The last name in the global order: every other one is taken (or tried) first.
        const order = locks.multiLock(names);
        const last = [...names].sort((x, y) => locks.lock(x).keys.slot - locks.lock(y).keys.slot || (x < y ? -1 : 1)).at(-1)!;
        expect(order.names).toEqual(names);
        const plain = await rival.lock(last).acquire({ leaseMs: 600_000 });
        // Generous: the names before `last` are free, so the wait ends on `last` however busy the machine.
        const error = await order.acquire({ waitMs: 2_000 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(LockTimeoutError);
        expect((error as LockTimeoutError).lockName).toBe(last);
        expect(await held(locks, names)).toEqual(names.map((n) => (n === last ? 1 : 0)));
        expect(locks.heldCount).toBe(0);
        // The queue entry's withdrawal is sent before the rejection, not awaited past waitMs: it lands one reply later.
        await waitFor(async () => (await admin.llen(locks.lock(last).keys.queue)) === 0);
        await plain.release();
      });

      it('an aborted wait gives back every name taken', async () => {
        const locks = await fx.client();
        const rival = await fx.client();
        const names = namesOf(`abort-${layout}`, 3);
        const multi = locks.multiLock(names);
        const plain = await rival.lock(names[0]!).acquire({ leaseMs: 600_000 });
        const controller = new AbortController();
        const waiting = multi.acquire({ signal: controller.signal }).catch((e: unknown) => e);
        await waitFor(async () => (await admin.llen(locks.lock(names[0]!).keys.queue)) === 1);
        controller.abort(new Error('stop waiting'));
        expect(await waiting).toMatchObject({ message: 'stop waiting' });
        expect(await held(locks, names)).toEqual([1, 0, 0]);
        expect(locks.heldCount).toBe(0);
        expect(await admin.llen(locks.lock(names[0]!).keys.queue)).toBe(0);
        await plain.release();
      });

      it('two multi-locks over the same names in opposite orders never deadlock', async () => {
        const a = await fx.client();
        const b = await fx.client();
        const names = namesOf(`deadlock-${layout}`, 3);
        const reversed = [...names].reverse();
        let inside = 0;
        let overlaps = 0;
        const run = (locks: LockClient, order: string[]) => async () => {
          for (let i = 0; i < 15; i++) {
            await locks.multiLock(order).withLock(async () => {
              inside++;
              if (inside > 1) overlaps++;
              await new Promise((resolve) => setImmediate(resolve));
              inside--;
            }, { waitMs: 60_000 });
          }
        };
        await Promise.all([run(a, names)(), run(b, reversed)(), run(a, reversed)(), run(b, names)()]);
        expect(overlaps).toBe(0);
        expect(await held(a, names)).toEqual([0, 0, 0]);
      }, 120_000);
    });
  }

  it('a name given twice is taken once', async () => {
    const locks = await fx.client();
    const multi = locks.multiLock(['dup-a', 'dup-b', 'dup-a']);
    expect(multi.names).toEqual(['dup-a', 'dup-b']);
    await multi.withLock(async (lease) => {
      expect(lease.tokens.size).toBe(2);
      // One hold of one owner: not taken twice.
      const hash = await lockFields(admin, locks.lock('dup-a').keys.lock);
      expect(Object.entries(hash).filter(([field]) => !field.startsWith('@')).map(([, count]) => count)).toEqual(['1']);
    });
  });

  it('a part whose key holds foreign data: KeyConflictError naming it, nothing taken, the data untouched', async () => {
    const locks = await fx.client();
    for (const names of [sameSlotNames('foreign', 3), differentSlotNames('foreign-x', 3)]) {
      const key = locks.lock(names[2]!).keys.lock;
      await admin.set(key, 'not a lock');
      const error = await locks.multiLock(names).acquire().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeyConflictError);
      expect((error as KeyConflictError).lockName).toBe(names[2]);
      expect(await held(locks, names.slice(0, 2))).toEqual([0, 0]);
      expect(await admin.get(key)).toBe('not a lock');
      await admin.del(key);
    }
  });

  it('rejects bad input with InvalidArgumentError', async () => {
    const locks = await fx.client();
    expect(() => locks.multiLock([])).toThrow(InvalidArgumentError);
    expect(() => locks.multiLock([])).toThrow('Expected `names` to be a non-empty array of lock names, got `[]`');
    expect(() => locks.multiLock('a' as unknown as string[])).toThrow(InvalidArgumentError);
    expect(() => locks.multiLock(['a', ''])).toThrow(InvalidArgumentError);
    expect(() => locks.multiLock(['a', 7 as unknown as string])).toThrow(InvalidArgumentError);
    await expect(locks.multiLock(['a']).acquire({ waitMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(locks.multiLock(['a']).withLock(5 as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('one signal: aborts with the lost part’s LockLostError; release() then reports that part precisely', async () => {
    const locks = await fx.client();
    const names = differentSlotNames('signal', 3);
    const lost: LostEvent[] = [];
    locks.on('lost', (event) => lost.push(event));
    const lease = await locks.multiLock(names).acquire();
    const { signal } = lease;
    expect(signal.aborted).toBe(false);
    await locks.lock(names[1]!).forceRelease();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    expect((signal.reason as LockLostError).lockName).toBe(names[1]);
    expect(lease.isHeld).toBe(false);
    expect(lost.map((e) => [e.name, e.reason, e.multiLock])).toEqual([[names[1], 'deleted', names]]);
    const error = await lease.release().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MultiLockReleaseError);
    const partial = error as MultiLockReleaseError;
    expect(partial.code).toBe('ERR_MULTI_RELEASE');
    expect(partial.released).toEqual([names[0], names[2]]);
    expect([...partial.failures.keys()]).toEqual([names[1]]);
    expect(partial.failures.get(names[1]!)).toBeInstanceOf(LockNotHeldError);
    expect(await held(locks, names)).toEqual([0, 0, 0]);
  });

  it('[Symbol.asyncDispose] releases every part, once', async () => {
    const locks = await fx.client();
    const names = sameSlotNames('dispose', 2);
    const lease = await locks.multiLock(names).acquire();
    await lease[Symbol.asyncDispose]();
    expect(await held(locks, names)).toEqual([0, 0]);
    await lease[Symbol.asyncDispose]();
    expect(lease.isHeld).toBe(false);
  });

  it('extend() resets every part’s lease', async () => {
    const locks = await fx.client();
    const names = differentSlotNames('extend', 2);
    const lease = await locks.multiLock(names).acquire({ leaseMs: 5_000 });
    await lease.extend(60_000);
    for (const name of names) expect(await admin.pttl(locks.lock(name).keys.lock)).toBeGreaterThan(50_000);
    expect(lease.leaseMs).toBe(60_000);
    await expect(lease.extend(0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await locks.lock(names[0]!).forceRelease();
    await expect(lease.extend()).rejects.toBeInstanceOf(LockLostError);
    await lease.release().catch(() => undefined);
  });

  it('withLock re-enters: a plain lock on a part, and the same multi-lock, inside it', async () => {
    const locks = await fx.client();
    const rival = await fx.client();
    const names = [...sameSlotNames('reenter', 2), ...differentSlotNames('reenter-x', 1)];
    const multi = locks.multiLock(names);
    await multi.withLock(async (outer) => {
      const inner = await locks.lock(names[0]!).acquire();
      expect(inner.holdCount).toBe(2);
      expect(inner.token).toBe(outer.tokens.get(names[0]!));
      await inner.release();
      await locks.lock(names[2]!).withLock((l) => expect(l.token).toBe(outer.tokens.get(names[2]!)));
      await multi.withLock(async (again) => {
        expect([...again.tokens]).toEqual([...outer.tokens]);
      });
      // A multi-lock over a part and a new name: the part re-enters, the new name is taken.
      await locks.multiLock([names[1]!, 'reenter-new']).withLock(async (mixed) => {
        expect(mixed.tokens.get(names[1]!)).toBe(outer.tokens.get(names[1]!));
      });
      expect(await rival.multiLock(names).tryAcquire()).toBeNull();
    });
    expect(await held(locks, [...names, 'reenter-new'])).toEqual([0, 0, 0, 0]);
  });

  it('withLock rejects with the lost part’s error even when fn resolved', async () => {
    const locks = await fx.client();
    const names = sameSlotNames('wl-lost', 2);
    const result = locks.multiLock(names).withLock(async () => {
      await locks.lock(names[1]!).forceRelease();
      return 'done';
    });
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockLostError);
    expect((error as LockLostError).lockName).toBe(names[1]);
    expect(await held(locks, names)).toEqual([0, 0]);
  });

  it('events name the multi-lock and the part', async () => {
    const locks = await fx.client();
    const names = [...sameSlotNames('events', 2), ...differentSlotNames('events-x', 1)];
    const acquired: AcquiredEvent[] = [];
    const released: unknown[] = [];
    locks.on('acquired', (e) => acquired.push(e));
    locks.on('released', (e) => released.push(e));
    await locks.multiLock(names).withLock(() => undefined);
    expect(acquired.map((e) => e.name).sort()).toEqual([...names].sort());
    for (const e of acquired) expect(e.multiLock).toEqual(names);
    expect(released).toHaveLength(3);
    await locks.lock('events-plain').withLock(() => undefined);
    expect(acquired.at(-1)).not.toHaveProperty('multiLock');
  });

  it('close(): a held multi-lease aborts with ClientClosedError, a waiting one rejects with it', async () => {
    const locks = await fx.client();
    const rival = await fx.client();
    const names = sameSlotNames('close', 2);
    const other = sameSlotNames('close-wait', 2);
    const lease = await locks.multiLock(names).acquire();
    const plain = await rival.lock(other[1]!).acquire({ leaseMs: 600_000 });
    const waiting = locks.multiLock(other).acquire().catch((e: unknown) => e);
    await waitFor(async () => (await admin.llen(locks.lock(other[1]!).keys.queue)) === 1);
    await locks.close();
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(ClientClosedError);
    expect(await waiting).toBeInstanceOf(ClientClosedError);
    expect(() => locks.multiLock(names)).toThrow(ClientClosedError);
    await plain.release();
    expect(await held(rival, other)).toEqual([0, 0]);
  });
});
