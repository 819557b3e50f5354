import { InvalidArgumentError, LockClient, PubSubRefusedError, RedisTimeoutError, type LockClientOptions } from '@holdfast/core';
import { commandStats, glideConfig, glideTwin, readmeAcl, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queued } from '../helpers.js';

/**
 * `wait: 'spin'`: every kind's contended path on a server of this file's own, whose command
 * statistics show that no client sent (S)SUBSCRIBE; FIFO hand-off kept. `wait: 'auto'` under an
 * ACL without pub/sub: one `warning`, no `error`, and the waits work by spinning.
 */
describe('spin waiting', () => {
  let server: RedisServer;
  let admin: Redis;
  const made: LockClient[] = [];
  const redises: Redis[] = [];
  const errors: unknown[] = [];

  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
    const rules = readmeAcl('core').slice(1).filter((a) => !/^(\+(s?publish|s?subscribe|s?unsubscribe)|&.*)$/.test(a));
    await admin.call('ACL', 'SETUSER', 'nopubsub', ...rules);
    // GLIDE's subscriber reads its connections' CLIENT ID (its reconnection check).
    await admin.call('ACL', 'SETUSER', 'nopubsub-glide', ...rules, '+client|id');
  });
  afterEach(async () => {
    await Promise.all(made.splice(0).map((c) => c.close()));
    for (const r of redises.splice(0)) r.disconnect();
    expect(errors.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    admin.disconnect();
    await server.stop();
  });

  function client(options: LockClientOptions = {}, user?: string): LockClient {
    const redis = user ? server.client({ username: user, password: 'secret' }) : server.client();
    redises.push(redis);
    const c = new LockClient(redis, { prefix: 'spin', wait: 'spin', ...options });
    c.on('error', (e) => errors.push(e));
    made.push(c);
    return c;
  }

  /** Runs `fn`; asserts that no (S)SUBSCRIBE reached the server meanwhile. */
  async function noSubscription(fn: () => Promise<void>): Promise<void> {
    const subscribes = async () => {
      const stats = await commandStats(admin);
      return Object.entries(stats).filter(([command, calls]) => /subscribe/.test(command) && calls > 0);
    };
    expect(await subscribes()).toEqual([]);
    await fn();
    expect(await subscribes()).toEqual([]);
    expect(Number(/pubsub_clients:(\d+)/.exec(await admin.info('clients'))?.[1] ?? 0)).toBe(0);
  }

  it('mutex: queued waiters get the lock in FIFO order, each by a hand-off found by its next look', () =>
    noSubscription(async () => {
      const holder = client();
      const lease = await holder.lock('fifo').acquire({ leaseMs: 20_000 });
      const order: number[] = [];
      const tokens: number[] = [];
      const waits: Promise<void>[] = [];
      for (let i = 0; i < 4; i++) {
        const lock = client().lock('fifo');
        waits.push(
          lock.acquire({ waitMs: 20_000, leaseMs: 20_000 }).then(async (next) => {
            order.push(i);
            tokens.push(next.token);
            await next.release();
          }),
        );
        await queued(admin, lock.keys.queue, i + 1);
      }
      await lease.release();
      await Promise.all(waits);
      expect(order).toEqual([0, 1, 2, 3]);
      expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
      expect(tokens[0]).toBeGreaterThan(lease.token);
    }));

  it('read-write lock: readers wait out a writer, a writer waits out readers', () =>
    noSubscription(async () => {
      const [a, b, c] = [client(), client(), client()];
      const write = await a.readWriteLock('doc').write.acquire({ leaseMs: 20_000 });
      const readers = [b.readWriteLock('doc').read.acquire({ waitMs: 20_000 }), c.readWriteLock('doc').read.acquire({ waitMs: 20_000 })];
      await queued(admin, b.readWriteLock('doc').read.keys.queue, 2);
      await write.release();
      const reads = await Promise.all(readers);
      const writer = a.readWriteLock('doc').write.acquire({ waitMs: 20_000 });
      await queued(admin, a.readWriteLock('doc').write.keys.queue, 1);
      await Promise.all(reads.map((r) => r.release()));
      await (await writer).release();
    }));

  it('semaphore: a waiter gets the permits a holder gives back', () =>
    noSubscription(async () => {
      const [a, b] = [client(), client()];
      const held = await a.semaphore('gpus', { permits: 2 }).acquire({ permits: 2, leaseMs: 20_000 });
      const waiting = b.semaphore('gpus', { permits: 2 }).acquire({ permits: 1, waitMs: 20_000 });
      await queued(admin, b.semaphore('gpus', { permits: 2 }).keys.queue, 1);
      await held.release();
      await (await waiting).release();
    }));

  it('multi-lock: a group waits for its busy part', () =>
    noSubscription(async () => {
      const [a, b] = [client(), client()];
      const part = await a.lock('acct-2').acquire({ leaseMs: 20_000 });
      const waiting = b.multiLock(['acct-1', 'acct-2']).acquire({ waitMs: 20_000 });
      await queued(admin, b.lock('acct-2').keys.queue, 1);
      await part.release();
      await (await waiting).release();
    }));

  it('election: a candidate waits for the term, an observer sees the change', () =>
    noSubscription(async () => {
      const [a, b, c] = [client(), client(), client()];
      const first = await a.election('leader').campaign({ value: 'a' });
      const second = b.election('leader').campaign({ value: 'b' });
      const seen: (string | null)[] = [];
      const observed = (async () => {
        for await (const leader of c.election('leader').observe()) {
          seen.push(leader?.value ?? null);
          if (leader?.value === 'b') return;
        }
      })();
      await waitFor(() => seen.includes('a'), { timeoutMs: 10_000 });
      await first.resign();
      const term = await second;
      await observed;
      expect(await c.election('leader').leader()).toEqual({ value: 'b', epoch: term.epoch });
      await term.resign();
    }));

  it('latch and barrier: a wait ends when the count reaches 0, an arrival when the last party comes', () =>
    noSubscription(async () => {
      const [a, b] = [client(), client()];
      const latch = a.countDownLatch('import');
      expect(await latch.trySetCount(2)).toBe(true);
      const waiting = latch.wait({ waitMs: 20_000 });
      await b.countDownLatch('import').countDown();
      await b.countDownLatch('import').countDown();
      await waiting;
      const arrivals = [a.barrier('stage', { parties: 2 }).arrive({ waitMs: 20_000 }), b.barrier('stage', { parties: 2 }).arrive({ waitMs: 20_000 })];
      expect((await Promise.all(arrivals)).length).toBe(2);
    }));

  it('single-flight and inbox: a caller waits for the flight, a drain for the handler', () =>
    noSubscription(async () => {
      const [a, b] = [client(), client()];
      let finish!: () => void;
      const running = new Promise<void>((resolve) => (finish = resolve));
      let started!: () => void;
      const begun = new Promise<void>((resolve) => (started = resolve));
      const flight = a.singleFlight('rates', async () => {
        started();
        await running;
        return 42;
      });
      await begun;
      const looks = async () => (await commandStats(admin)).evalsha ?? 0;
      const before = await looks();
      const joined = b.singleFlight('rates', () => -1, { waitMs: 20_000 });
      // Its first look found the flight running, and it looked again: it waits.
      await waitFor(async () => (await looks()) >= before + 2);
      finish();
      expect(await Promise.all([flight, joined])).toEqual([42, 42]);
      const handled: number[] = [];
      const inbox = a.inbox<number>('orders', { handler: (_key, messages) => void handled.push(...messages) }).start();
      for (let i = 0; i < 5; i++) await b.inbox<number>('orders').post('thread', i);
      await b.inbox<number>('orders').drain('thread', { waitMs: 20_000 });
      expect(handled).toEqual([0, 1, 2, 3, 4]);
      await inbox.close();
    }));

  it("auto under an ACL without pub/sub: one warning, no error, and waits (and releases) work", async () => {
    const warnings: unknown[] = [];
    const [a, b] = [client({ wait: 'auto', prefix: 'holdfast' }, 'nopubsub'), client({ wait: 'auto', prefix: 'holdfast' }, 'nopubsub')];
    for (const c of [a, b]) c.on('warning', (w) => warnings.push(w));
    const lease = await a.lock('acl').acquire({ leaseMs: 20_000 });
    const waiting = [b.lock('acl').acquire({ waitMs: 20_000 }), b.lock('acl').acquire({ waitMs: 20_000 })];
    await queued(admin, b.lock('acl').keys.queue, 2);
    // The release hands the lock on though its publish is refused.
    await lease.release();
    const next = await Promise.race(waiting);
    await next.release();
    await (await Promise.all(waiting)).find((l) => l !== next)!.release();
    const latch = b.countDownLatch('acl');
    await latch.trySetCount(1);
    const latchWait = latch.wait({ waitMs: 20_000 });
    await a.countDownLatch('acl').countDown();
    await latchWait;
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toBeInstanceOf(PubSubRefusedError);
    expect((warnings[0] as PubSubRefusedError).code).toBe('ERR_PUBSUB_REFUSED');
    expect((warnings[0] as Error).message).toMatch(/NOPERM|permission/i);
    // The refused publishes are in the server's ACL LOG.
    const log = (await admin.call('ACL', 'LOG')) as unknown[][];
    expect(log.some((entry) => entry.includes('publish') || entry.includes('spublish'))).toBe(true);
  });

  it("auto where SUBSCRIBE is an unknown command (a proxy without pub/sub; here a server with the commands renamed away): one warning, and waits work", async () => {
    const bare = await startRedis({ args: ['--rename-command', 'SUBSCRIBE', '', '--rename-command', 'SSUBSCRIBE', ''] });
    const warnings: unknown[] = [];
    const make = () => {
      const redis = bare.client();
      redises.push(redis);
      const c = new LockClient(redis, { prefix: 'holdfast', wait: 'auto' });
      c.on('error', (e) => errors.push(e));
      c.on('warning', (w) => warnings.push(w));
      made.push(c);
      return c;
    };
    const watcher = bare.client();
    redises.push(watcher);
    try {
      const [a, b] = [make(), make()];
      const lease = await a.lock('proxy').acquire({ leaseMs: 20_000 });
      const waiting = b.lock('proxy').acquire({ waitMs: 20_000 });
      await queued(watcher, b.lock('proxy').keys.queue, 1);
      await lease.release();
      await (await waiting).release();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toBeInstanceOf(PubSubRefusedError);
      expect((warnings[0] as Error).message).toMatch(/unknown command/i);
    } finally {
      await Promise.all(made.splice(0).map((c) => c.close()));
      await bare.stop();
    }
  });

  it("auto over Valkey GLIDE under that ACL: a subscription GLIDE never confirms (it resends it) is a refusal too", async () => {
    const warnings: unknown[] = [];
    const user = { username: 'nopubsub-glide', password: 'secret' };
    const glide = () => {
      const twin = glideTwin(server.client(user), glideConfig(server, { ...user, commandTimeout: 1_000 }), false);
      redises.push(twin);
      return twin;
    };
    const make = () => {
      const c = new LockClient(glide(), { prefix: 'holdfast', wait: 'auto', commandTimeoutMs: 1_000 });
      c.on('error', (e) => errors.push(e));
      c.on('warning', (w) => warnings.push(w));
      made.push(c);
      return c;
    };
    const [a, b] = [make(), make()];
    try {
      const lease = await a.lock('glide').acquire({ leaseMs: 20_000 });
      const waiting = b.lock('glide').acquire({ waitMs: 20_000 });
      await queued(admin, b.lock('glide').keys.queue, 1);
      await lease.release();
      await (await waiting).release();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toBeInstanceOf(PubSubRefusedError);
      // GLIDE said nothing of the refusal: the subscription timed out while the server answered.
      expect((warnings[0] as Error).cause).toBeInstanceOf(RedisTimeoutError);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('options: the defaults, their bounds, and typed errors', () => {
    const redis = server.client({ lazyConnect: true });
    redises.push(redis);
    const options = (o: LockClientOptions) => new LockClient(redis, o).options;
    expect(options({})).toMatchObject({ wait: 'auto', spinMinMs: 10, spinMaxMs: 100 });
    expect(options({ handoffTimeoutMs: 50 })).toMatchObject({ spinMinMs: 10, spinMaxMs: 25 });
    expect(options({ handoffTimeoutMs: 10, spinMinMs: 2 })).toMatchObject({ spinMinMs: 2, spinMaxMs: 5 });
    for (const bad of [{ wait: 'poll' }, { spinMaxMs: 1_001 }, { spinMinMs: 0 }, { spinMinMs: 200 }, { spinMaxMs: 20, spinMinMs: 30 }, { spinMaxMs: 1.5 }]) {
      expect(() => new LockClient(redis, bad as LockClientOptions), JSON.stringify(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => new LockClient(redis, { wait: 'poll' } as unknown as LockClientOptions)).toThrow(
      "Expected `wait` to be one of 'pubsub', 'spin', 'auto', got `\"poll\"`",
    );
  });
});
