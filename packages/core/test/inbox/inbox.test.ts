import {
  ClientClosedError,
  InboxFullError,
  InboxMessageError,
  InvalidArgumentError,
  KeyConflictError,
  LockTimeoutError,
  type Inbox,
  type InboxDeadEvent,
  type InboxEvents,
} from '@holdfast/core';
import { waitFor } from '@holdfast/test-utils';
import { describe, expect, it } from 'vitest';
import { delay, useRedis } from '../helpers.js';

/** Resolves with the next `event` of `inbox`. */
function nextEvent<T, K extends keyof InboxEvents<T>>(inbox: Inbox<T>, event: K): Promise<InboxEvents<T>[K][0]> {
  return new Promise((resolve) => (inbox as Inbox<T>).once(event, ((arg: InboxEvents<T>[K][0]) => resolve(arg)) as never));
}

/** A promise with its resolve function, for handlers held open by the test. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('inbox', () => {
  const fx = useRedis();

  it('handles every message of a key once, in post order, one call at a time, and leaves nothing behind', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const seen: number[] = [];
    let running = 0;
    let overlapped = false;
    const handler = async (_key: string, messages: number[]) => {
      if (running++ > 0) overlapped = true;
      await delay(1);
      seen.push(...messages);
      running--;
    };
    const inboxA = a.inbox<number>('orders', { handler });
    const inboxB = b.inbox<number>('orders', { handler });
    const positions: number[] = [];
    for (let i = 0; i < 30; i++) positions.push((await (i % 2 ? inboxA : inboxB).post('thread-1', i)).position);
    expect(positions[0]).toBe(1);
    await inboxA.drain('thread-1', { waitMs: 20_000 });
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(overlapped).toBe(false);
    expect(await inboxB.pending('thread-1')).toBe(0);
    expect(await inboxB.keys()).toEqual([]);
    await waitFor(() => inboxA.activeKeys.length === 0 && inboxB.activeKeys.length === 0);
    const admin = await fx.redis();
    // Only the slot's fencing counter stays: no queue, lease, attempts or index key.
    expect(await admin.keys(`${fx.prefix}:{*}:ib*`)).toEqual([]);
  });

  it('gives the handler a token, a signal and the attempt, and hands a busy key posts to its processor', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const first = gate();
    const calls: { from: string; messages: string[]; token: number; attempt: number }[] = [];
    const inboxA = a.inbox<string>('chat', {
      handler: async (_key, messages, { token, signal, attempt }) => {
        expect(signal.aborted).toBe(false);
        calls.push({ from: 'a', messages, token, attempt });
        if (messages[0] === 'hello') await first.promise;
      },
    });
    const inboxB = b.inbox<string>('chat', { handler: (_key, messages, { token, attempt }) => void calls.push({ from: 'b', messages, token, attempt }) });
    const claimed = nextEvent(inboxA, 'claimed');
    await inboxA.post('t', 'hello');
    const { token } = await claimed;
    await waitFor(() => calls.length === 1);
    // Posted by B to a key A processes: B only stores it.
    expect((await inboxB.post('t', 'world')).position).toBe(2);
    expect(inboxB.activeKeys).toEqual([]);
    first.open();
    await inboxB.drain('t', { waitMs: 10_000 });
    expect(calls).toEqual([
      { from: 'a', messages: ['hello'], token, attempt: 1 },
      { from: 'a', messages: ['world'], token, attempt: 1 },
    ]);
  });

  it('batch mode hands every pending message, up to maxBatch, in one call', async () => {
    const locks = await fx.client();
    const first = gate();
    const calls: number[][] = [];
    const producer = locks.inbox<number>('batch');
    const inbox = locks.inbox<number>('batch', {
      mode: 'batch',
      maxBatch: 4,
      handler: async (_key, messages) => {
        calls.push(messages);
        if (messages[0] === 0) await first.promise;
      },
    });
    await inbox.post('k', 0);
    await waitFor(() => calls.length === 1);
    for (let i = 1; i <= 6; i++) await producer.post('k', i);
    first.open();
    await inbox.drain('k', { waitMs: 10_000 });
    expect(calls).toEqual([[0], [1, 2, 3, 4], [5, 6]]);
  });

  it('debounce mode coalesces a burst into one call', async () => {
    const locks = await fx.client();
    const producer = locks.inbox<string>('typing');
    const calls: string[][] = [];
    const inbox = locks.inbox<string>('typing', { mode: 'debounce', debounceMs: 50, handler: (_key, messages) => void calls.push(messages) });
    for (const word of ['a', 'burst', 'of', 'words']) await producer.post('k', word);
    expect(await inbox.recover()).toBe(1);
    await inbox.drain('k', { waitMs: 10_000 });
    expect(calls).toEqual([['a', 'burst', 'of', 'words']]);
  });

  it('debounce mode restarts its wait on each post', async () => {
    const locks = await fx.client();
    const calls: string[][] = [];
    const inbox = locks.inbox<string>('typing2', { mode: 'debounce', debounceMs: 1500, handler: (_key, messages) => void calls.push(messages) });
    const claimed = nextEvent(inbox, 'claimed');
    await inbox.post('k', 'one');
    await claimed;
    await inbox.post('k', 'two');
    await inbox.post('k', 'three');
    await inbox.drain('k', { waitMs: 10_000 });
    expect(calls).toEqual([['one', 'two', 'three']]);
  });

  it('retries a rejecting handler with backoff, then dead-letters the message and goes on', async () => {
    const locks = await fx.client();
    const attempts: number[] = [];
    const handled: string[] = [];
    const failure = new Error('boom');
    const inbox = locks.inbox<string>('retry', {
      maxAttempts: 3,
      retryDelayMs: 1,
      handler: (_key, [message], { attempt }) => {
        if (message === 'poison') {
          attempts.push(attempt);
          throw failure;
        }
        handled.push(message!);
      },
    });
    const retried: number[] = [];
    inbox.on('retried', (e) => retried.push(e.delayMs));
    const dead: InboxDeadEvent<string>[] = [];
    inbox.on('dead', (e) => dead.push(e));
    await inbox.post('k', 'poison');
    await inbox.post('k', 'fine');
    await inbox.drain('k', { waitMs: 10_000 });
    expect(attempts).toEqual([1, 2, 3]);
    expect(retried).toEqual([1, 2]);
    expect(dead).toEqual([{ key: 'k', message: 'poison', stored: '"poison"', reason: 'attempts', attempts: 3, error: failure }]);
    expect(handled).toEqual(['fine']);
  });

  it('drops messages older than ttlMs with a dead event, never silently', async () => {
    const locks = await fx.client();
    await locks.inbox<string>('old').post('k', 'stale');
    const handled: string[] = [];
    const inbox = locks.inbox<string>('old', { ttlMs: 20, handler: (_key, messages) => void handled.push(...messages) });
    await delay(40);
    const dead = nextEvent(inbox, 'dead');
    expect(await inbox.recover()).toBe(1);
    expect(await dead).toMatchObject({ key: 'k', message: 'stale', reason: 'ttl', attempts: 0 });
    await inbox.drain('k', { waitMs: 10_000 });
    expect(handled).toEqual([]);
  });

  it('refuses a post past maxPending or maxMessageBytes, storing nothing', async () => {
    const locks = await fx.client();
    const inbox = locks.inbox<string>('bounded', { maxPending: 2, maxMessageBytes: 10 });
    await inbox.post('k', 'a');
    await inbox.post('k', 'b');
    await expect(inbox.post('k', 'c')).rejects.toBeInstanceOf(InboxFullError);
    await expect(inbox.post('k', 'c')).rejects.toMatchObject({ code: 'ERR_INBOX_FULL', pending: 2 });
    await expect(inbox.post('other', 'x'.repeat(20))).rejects.toMatchObject({ code: 'ERR_INBOX_MESSAGE', bytes: 22 });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(locks.inbox<unknown>('bounded').post('other', cyclic)).rejects.toBeInstanceOf(InboxMessageError);
    expect(await inbox.pending('k')).toBe(2);
    expect(await inbox.pending('other')).toBe(0);
    expect((await inbox.keys()).sort()).toEqual(['k']);
  });

  it("fences removal: a processor that lost its key cannot remove a message the next one has not handled", async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const admin = await fx.redis();
    const gateA = gate();
    const gateB = gate();
    const tokens: number[] = [];
    const inboxA = a.inbox<string>('fenced', { leaseMs: 60_000, handler: async (_k, _m, { token }) => { tokens.push(token); await gateA.promise; } });
    const inboxB = b.inbox<string>('fenced', { leaseMs: 60_000, handler: async (_k, _m, { token }) => { tokens.push(token); await gateB.promise; } });
    await inboxA.post('k', 'm');
    await waitFor(() => tokens.length === 1);
    // A's lease runs out while it is frozen mid-call (removed here, and the index told, as its expiry would).
    const [lease] = await admin.keys(`${fx.prefix}:{*}:ibl:6:fenced:k`);
    const [index] = await admin.keys(`${fx.prefix}:{*}:ibx:fenced`);
    expect(await admin.del(lease!)).toBe(1);
    expect(await admin.zadd(index!, 0, 'k')).toBe(0);
    expect(await inboxB.recover()).toBe(1);
    await waitFor(() => tokens.length === 2);
    expect(tokens[1]).toBeGreaterThan(tokens[0]!);
    const lost = nextEvent(inboxA, 'lost');
    gateA.open();
    await lost;
    expect(await inboxA.pending('k')).toBe(1);
    gateB.open();
    await inboxB.drain('k', { waitMs: 10_000 });
    expect(await inboxA.pending('k')).toBe(0);
  });

  it('close() aborts a running handler, waits for it, and leaves its message to the next processor', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    let reason: unknown;
    let running = false;
    const inboxA = a.inbox<string>('closing', {
      handler: (_k, _m, { signal }) =>
        new Promise<void>((resolve) => {
          running = true;
          signal.addEventListener('abort', () => {
            reason = signal.reason;
            resolve();
          });
        }),
    });
    await inboxA.post('k', 'm');
    await waitFor(() => running);
    await inboxA.close();
    expect(reason).toBeInstanceOf(ClientClosedError);
    expect(await inboxA.activeKeys).toEqual([]);
    await expect(inboxA.post('k', 'n')).rejects.toBeInstanceOf(ClientClosedError);
    const handled: string[] = [];
    const inboxB = b.inbox<string>('closing', { handler: (_k, messages) => void handled.push(...messages) });
    expect(await inboxB.recover()).toBe(1);
    await inboxB.drain('k', { waitMs: 10_000 });
    expect(handled).toEqual(['m']);
  });

  it('processes 20 keys at once without a MaxListenersExceededWarning, and close() still aborts every handler', async () => {
    const KEYS = 20;
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      const locks = await fx.client();
      const reasons: unknown[] = [];
      let running = 0;
      const inbox = locks.inbox<number>('wide', {
        concurrency: KEYS,
        handler: (_k, _m, { signal }) =>
          new Promise<void>((resolve) => {
            running++;
            signal.addEventListener('abort', () => {
              reasons.push(signal.reason);
              resolve();
            });
          }),
      });
      for (let i = 0; i < KEYS; i++) await inbox.post(`k${i}`, i);
      await waitFor(() => running === KEYS);
      expect(inbox.activeKeys).toHaveLength(KEYS);
      await inbox.close();
      expect(reasons).toHaveLength(KEYS);
      for (const reason of reasons) expect(reason).toBeInstanceOf(ClientClosedError);
      // A warning is emitted on the next tick: let it arrive before looking.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
      // Every message stays pending for the next processor.
      expect((await locks.inbox<number>('wide').keys()).length).toBe(KEYS);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a started inbox takes over keys nobody processes', async () => {
    const [a, b] = [await fx.client(), await fx.client()];
    const producer = a.inbox<number>('started');
    for (let i = 0; i < 5; i++) await producer.post(`k${i}`, i);
    expect((await producer.keys()).sort()).toEqual(['k0', 'k1', 'k2', 'k3', 'k4']);
    const handled: number[] = [];
    const consumer = b.inbox<number>('started', { recoverIntervalMs: 20, handler: (_k, [m]) => void handled.push(m!) }).start();
    await waitFor(() => handled.length === 5);
    expect(handled.sort()).toEqual([0, 1, 2, 3, 4]);
    await consumer.close();
  });

  it('drain rejects with LockTimeoutError when waitMs runs out', async () => {
    const locks = await fx.client();
    const inbox = locks.inbox<string>('slow');
    await inbox.post('k', 'never handled here');
    await expect(inbox.drain('k', { waitMs: 30 })).rejects.toBeInstanceOf(LockTimeoutError);
  });

  it('leaves foreign data alone with KeyConflictError', async () => {
    const locks = await fx.client();
    const admin = await fx.redis();
    const inbox = locks.inbox<string>('foreign');
    await inbox.post('k', 'm');
    const [queue] = await admin.keys(`${fx.prefix}:{*}:ibq:7:foreign:k`);
    await admin.del(queue!);
    await admin.set(queue!, 'not a list');
    await expect(inbox.post('k', 'x')).rejects.toBeInstanceOf(KeyConflictError);
    await expect(inbox.pending('k')).rejects.toBeInstanceOf(KeyConflictError);
    expect(await admin.get(queue!)).toBe('not a list');
  });

  it('checks its options and arguments', async () => {
    const locks = await fx.client();
    expect(() => locks.inbox('x', { mode: 'all' as never })).toThrow(InvalidArgumentError);
    expect(() => locks.inbox('x', { maxBatch: 0 })).toThrow(InvalidArgumentError);
    expect(() => locks.inbox('x', { handler: 1 as never })).toThrow(InvalidArgumentError);
    expect(() => locks.inbox('')).toThrow(InvalidArgumentError);
    await expect(locks.inbox('x').post('', 1)).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});
