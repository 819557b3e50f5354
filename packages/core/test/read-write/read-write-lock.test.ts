import { InvalidArgumentError, LockUpgradeError, type AcquiredEvent, type Lease, type LostEvent } from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { useRedis } from '../helpers.js';

/** Read-write lock behaviour on real Redis: sharing, exclusion, re-entry, downgrade, fairness, tokens. */
describe('read-write lock', () => {
  const fx = useRedis();

  /** A latch a test opens by hand. */
  function latch() {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  }

  it('readers share, a writer waits for them and then holds alone', async () => {
    const a = await fx.client();
    const b = await fx.client();
    const docA = a.readWriteLock('share');
    const docB = b.readWriteLock('share');
    const r1 = await docA.read.acquire();
    const r2 = await docB.read.acquire();
    const r3 = await docA.read.tryAcquire();
    expect(r3).not.toBeNull();
    expect(await docB.write.tryAcquire()).toBeNull();
    expect(await docA.read.isLocked()).toBe(true);
    expect(await docA.write.isLocked()).toBe(false);
    await r1.release();
    await r2.release();
    expect(await docB.write.tryAcquire()).toBeNull();
    await r3!.release();
    const w = await docB.write.acquire({ waitMs: 10_000 });
    expect(await docA.write.isLocked()).toBe(true);
    expect(await docA.read.isLocked()).toBe(false);
    expect(await docA.read.tryAcquire()).toBeNull();
    expect(await docA.write.tryAcquire()).toBeNull();
    expect(await docA.write.remainingTtlMs()).toBeGreaterThan(0);
    await w.release();
    expect(await docA.write.isLocked()).toBe(false);
  });

  it('a mutex and a read-write lock of the same name are distinct locks', async () => {
    const locks = await fx.client();
    const mutex = await locks.lock('same').acquire();
    const write = await locks.readWriteLock('same').write.tryAcquire();
    expect(write).not.toBeNull();
    expect(locks.readWriteLock('same').read.keys.lock).not.toBe(locks.lock('same').keys.lock);
    expect(locks.readWriteLock('same').read.keys.slot).toBe(locks.lock('same').keys.slot);
    await write!.release();
    await mutex.release();
  });

  it('re-enters read inside read and write inside write, with the same token', async () => {
    const locks = await fx.client();
    const doc = locks.readWriteLock('reenter');
    await doc.read.withLock(async (outer) => {
      const inner = await doc.read.acquire();
      expect(inner.holdCount).toBe(2);
      expect(inner.token).toBe(outer.token);
      await inner.release();
    });
    await doc.write.withLock(async (outer) => {
      await doc.write.withLock(async (inner) => {
        expect(inner.holdCount).toBe(2);
        expect(inner.token).toBe(outer.token);
      });
      expect(outer.isHeld).toBe(true);
    });
    expect(await doc.write.isLocked()).toBe(false);
  });

  it('downgrades: a read inside the write hold is granted at once and outlives the write', async () => {
    const locks = await fx.client();
    const other = await fx.client();
    const doc = locks.readWriteLock('downgrade');
    const otherDoc = other.readWriteLock('downgrade');
    let read: Lease | undefined;
    let queuedWriter: Promise<Lease> | undefined;
    await doc.write.withLock(async (write) => {
      // Another writer queues first: the downgrade still does not wait behind it.
      queuedWriter = otherDoc.write.acquire({ waitMs: 20_000 });
      await waitFor(async () => (await (await fx.redis()).llen(doc.write.keys.queue)) === 1);
      read = await doc.read.acquire();
      expect(read.token).toBeGreaterThanOrEqual(write.token);
      expect(read.holdCount).toBe(1);
    });
    expect(read!.isHeld).toBe(true);
    expect(await doc.write.isLocked()).toBe(false);
    expect(await doc.read.isLocked()).toBe(true);
    // The queued writer still waits for the downgraded reader.
    expect(await otherDoc.write.tryAcquire()).toBeNull();
    await read!.release();
    const w = await queuedWriter!;
    expect(w.token).toBeGreaterThan(read!.token);
    await w.release();
  });

  it('refuses an upgrade at once with LockUpgradeError, even with a wait allowed', async () => {
    const locks = await fx.client();
    const doc = locks.readWriteLock('upgrade');
    await doc.read.withLock(async () => {
      const error = await doc.write.acquire({ waitMs: 60_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockUpgradeError);
      expect((error as LockUpgradeError).code).toBe('ERR_LOCK_UPGRADE');
      await expect(doc.write.tryAcquire()).rejects.toBeInstanceOf(LockUpgradeError);
      await expect(doc.write.withLock(() => 1)).rejects.toBeInstanceOf(LockUpgradeError);
    });
    // Outside the read hold the write is fine.
    await doc.write.withLock(() => undefined);
  });

  it('is fair: a waiting writer holds back readers that arrive after it', async () => {
    const a = await fx.client();
    const b = await fx.client();
    const c = await fx.client();
    const redis = await fx.redis();
    const order: string[] = [];
    const first = await a.readWriteLock('fair').read.acquire();
    const writer = b.readWriteLock('fair').write.acquire({ waitMs: 20_000 }).then((l) => (order.push('writer'), l));
    await waitFor(async () => (await redis.llen(a.readWriteLock('fair').read.keys.queue)) === 1);
    expect(await c.readWriteLock('fair').read.tryAcquire()).toBeNull();
    const reader = c.readWriteLock('fair').read.acquire({ waitMs: 20_000 }).then((l) => (order.push('reader'), l));
    await waitFor(async () => (await redis.llen(a.readWriteLock('fair').read.keys.queue)) === 2);
    await first.release();
    const w = await writer;
    expect(order).toEqual(['writer']);
    await w.release();
    const r = await reader;
    expect(order).toEqual(['writer', 'reader']);
    expect(r.token).toBeGreaterThanOrEqual(w.token);
    await r.release();
  });

  it('does not starve a writer under a steady stream of overlapping readers', async () => {
    const readers = await Promise.all([fx.client(), fx.client(), fx.client()]);
    const writerClient = await fx.client();
    let writerDone = false;
    let readsDuringStream = 0;
    // Each reader takes its next hold before letting go of the last, so the
    // read side is never free: only the queue lets the writer in.
    const stream = readers.map(async (locks) => {
      const doc = locks.readWriteLock('stream');
      let held = await doc.read.acquire({ waitMs: 30_000 });
      while (!writerDone) {
        const next = doc.read.acquire({ waitMs: 30_000 });
        await held.release();
        held = await next;
        readsDuringStream++;
      }
      await held.release();
    });
    await waitFor(() => readsDuringStream >= 6, { timeoutMs: 20_000 });
    const w = await writerClient.readWriteLock('stream').write.acquire({ waitMs: 30_000 });
    writerDone = true;
    await w.release();
    await Promise.all(stream);
  }, 60_000);

  it('a writer release wakes every queued reader at once with one message', async () => {
    const writerClient = await fx.client();
    const readerClients = await Promise.all([fx.client(), fx.client(), fx.client()]);
    const redis = await fx.redis();
    const doc = writerClient.readWriteLock('one-message');
    const w = await doc.write.acquire();
    const subscriber = await fx.redis();
    const messages: string[] = [];
    subscriber.on('smessage', (_channel: string, message: string) => messages.push(message));
    await subscriber.ssubscribe(doc.read.keys.channel);
    const inside = latch();
    let holding = 0;
    const reads = readerClients.map((locks) =>
      locks.readWriteLock('one-message').read.withLock(async () => {
        holding++;
        await inside.opened;
      }, { waitMs: 30_000 }),
    );
    await waitFor(async () => (await redis.llen(doc.read.keys.queue)) === 3);
    await w.release();
    // All three hold together: the readers share.
    await waitFor(() => holding === 3, { timeoutMs: 10_000 });
    await waitFor(() => messages.length >= 1);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^g\|/);
    expect(messages[0]!.split('|').slice(4)).toHaveLength(3);
    inside.open();
    await Promise.all(reads);
    subscriber.disconnect();
  });

  it('tokens: a writer beats every earlier token; a reader sits between the writes around it', async () => {
    const locks = await fx.client();
    const doc = locks.readWriteLock('tokens');
    const w1 = await doc.write.acquire();
    await w1.release();
    const r1 = await doc.read.acquire();
    const r1b = await doc.read.acquire();
    await r1.release();
    await r1b.release();
    const w2 = await doc.write.acquire();
    await w2.release();
    const r2 = await doc.read.acquire();
    await r2.release();
    // What a resource keeping the last write's token decides:
    expect(w2.token).toBeGreaterThan(w1.token);
    expect(w2.token).toBeGreaterThan(r1.token); // a writer's token is above every earlier token
    expect(r1.token).toBeGreaterThanOrEqual(w1.token); // r1 saw w1's write: fresh then
    expect(r1.token < w2.token).toBe(true); // after w2 wrote, r1's decisions are stale: rejected
    expect(r2.token).toBeGreaterThanOrEqual(w2.token); // r2 read after w2: accepted
    expect(await doc.read.currentToken()).toBeNull();
  });

  it('each reader has its own lease: one that stops renewing expires, the others hold on', async () => {
    const locks = await fx.client();
    const redis = await fx.redis();
    const doc = locks.readWriteLock('own-lease');
    const lost: LostEvent[] = [];
    locks.on('lost', (e) => lost.push(e));
    const short = await doc.read.acquire({ leaseMs: 400 });
    const long = await doc.read.acquire({ leaseMs: 60_000 });
    expect(await redis.pttl(doc.read.keys.lock)).toBeGreaterThan(30_000);
    await waitFor(() => !short.isHeld, { timeoutMs: 10_000 });
    expect(lost.map((e) => [e.reason, e.kind])).toEqual([['expired', 'read']]);
    expect(long.isHeld).toBe(true);
    // The expired reader no longer counts: the server sees one live reader.
    expect(await locks.readWriteLock('own-lease').write.tryAcquire()).toBeNull();
    await long.release();
    // The last lease gone, so is the key.
    expect(await redis.exists(doc.read.keys.lock)).toBe(0);
    const crashed = await doc.read.acquire({ leaseMs: 300 });
    expect(await redis.pttl(doc.read.keys.lock)).toBeLessThanOrEqual(300);
    await waitFor(async () => (await redis.exists(doc.read.keys.lock)) === 0, { timeoutMs: 10_000 });
    expect(crashed.isHeld).toBe(false);
  });

  it('a writer waiting on a reader that stopped renewing gets the lock when that lease ends', async () => {
    const a = await fx.client();
    const b = await fx.client();
    await a.readWriteLock('crash').read.acquire({ leaseMs: 500 });
    const w = await b.readWriteLock('crash').write.acquire({ waitMs: 20_000 });
    expect(w.isHeld).toBe(true);
    await w.release();
  });

  it('forceRelease: read frees the readers, write the writer, the lock both; waiters are woken', async () => {
    const a = await fx.client();
    const b = await fx.client();
    const lost: LostEvent[] = [];
    a.on('lost', (e) => lost.push(e));
    const doc = a.readWriteLock('force');
    const r = await doc.read.acquire();
    const waiting = b.readWriteLock('force').write.acquire({ waitMs: 20_000 });
    await waitFor(async () => (await (await fx.redis()).llen(doc.read.keys.queue)) === 1);
    expect(await doc.write.forceRelease()).toBe(false);
    expect(r.isHeld).toBe(true);
    expect(await doc.read.forceRelease()).toBe(true);
    expect(r.isHeld).toBe(false);
    expect(lost.map((e) => [e.reason, e.kind])).toEqual([['deleted', 'read']]);
    const w = await waiting;
    expect(await doc.forceRelease()).toBe(true);
    expect(await doc.write.isLocked()).toBe(false);
    // Another client's lease learns it from Redis at its next call: the release, or the hand-off's
    // confirmation when that runs after the force release (it runs off the caller's path).
    await w.release().catch(() => undefined);
    expect(w.isHeld).toBe(false);
    expect(await doc.read.isLocked()).toBe(false);
  });

  it('emits typed events that tell the side, and disposes leases with Symbol.asyncDispose', async () => {
    const locks = await fx.client();
    const acquired: AcquiredEvent[] = [];
    const released: string[] = [];
    locks.on('acquired', (e) => acquired.push(e));
    locks.on('released', (e) => released.push(`${e.kind}:${e.holdCount}`));
    const doc = locks.readWriteLock('events');
    const read = await doc.read.acquire();
    await read[Symbol.asyncDispose]();
    expect(read.isHeld).toBe(false);
    const write = await doc.write.acquire();
    await write.extend(20_000);
    await write[Symbol.asyncDispose]();
    await write[Symbol.asyncDispose]();
    expect(acquired.map((e) => e.kind)).toEqual(['read', 'write']);
    expect(released).toEqual(['read:0', 'write:0']);
    const mutexEvents: AcquiredEvent[] = [];
    locks.on('acquired', (e) => mutexEvents.push(e));
    await locks.lock('events').withLock(() => undefined);
    expect(mutexEvents.at(-1)!.kind).toBeUndefined();
  });

  it('close() ends read and write leases and leaves no waiter behind', async () => {
    const locks = await fx.client();
    const other = await fx.client();
    const lost: string[] = [];
    locks.on('lost', (e) => lost.push(`${e.kind}:${e.reason}`));
    const w = await other.readWriteLock('close').write.acquire();
    const read = await locks.readWriteLock('close2').read.acquire();
    const waiting = locks.readWriteLock('close').read.acquire().catch((e: unknown) => e);
    await waitFor(async () => (await (await fx.redis()).llen(other.readWriteLock('close').read.keys.queue)) === 1);
    await locks.close({ release: true });
    expect(((await waiting) as Error).name).toBe('ClientClosedError');
    expect(read.isHeld).toBe(false);
    expect(lost).toEqual(['read:closed']);
    expect(await other.readWriteLock('close2').write.tryAcquire()).not.toBeNull();
    await w.release();
  });

  it('validates its input with InvalidArgumentError', async () => {
    const locks = await fx.client();
    expect(() => locks.readWriteLock('')).toThrow(InvalidArgumentError);
    expect(() => locks.readWriteLock(42 as unknown as string)).toThrow(InvalidArgumentError);
    await expect(locks.readWriteLock('v').read.acquire({ leaseMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(locks.readWriteLock('v').write.withLock(null as never)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
