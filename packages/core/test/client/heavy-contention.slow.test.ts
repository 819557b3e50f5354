import type { Redis } from 'ioredis';
import { LockClient, LockTimeoutError } from '@holdfast/core';
import { FaultProxy, startRedis, uniqueName, type RedisServer } from '@holdfast/test-utils';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { delay } from '../helpers.js';

/**
 * Many tasks over a few locks on clients whose subscriber connection is still
 * being set up when the first waiters join (Redisson's
 * testSubscriptionsPerConnection shape, without the warm-up its port in
 * ports/redisson-lock.test.ts does first).
 *
 * What happens with ioredis 5.9: a SSUBSCRIBE issued while the subscriber is
 * connected but not ready yet is written at once (it may run while the server
 * loads), so the connection turns subscriber before its ready check; the
 * check's INFO is refused ("only (P|S)SUBSCRIBE / ... are allowed in this
 * context"), ioredis rejects what it still had queued (another lock's
 * SSUBSCRIBE) and reconnects, and since the connection never was ready it does
 * not resubscribe the channel that did succeed. Both locks' waiters then hear
 * no hand-off and sleep on the holder's whole lease.
 *
 * A loopback proxy's latency stretches the handshake to a few hundred ms, so
 * the joins land inside it on every run, not once in many.
 */
describe('heavy contention on clients whose subscriber is still connecting', () => {
  let server: RedisServer;
  const proxies: FaultProxy[] = [];
  const clients: LockClient[] = [];
  const connections: Redis[] = [];

  beforeAll(async () => {
    server = await startRedis();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (const r of connections.splice(0)) r.disconnect();
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** A ready ioredis client through a loopback proxy (no latency yet). */
  async function proxied(): Promise<{ connection: Redis; proxy: FaultProxy }> {
    const proxy = await FaultProxy.start({ host: server.host, port: server.port });
    proxies.push(proxy);
    const connection = server.client({ port: proxy.port });
    connections.push(connection);
    await connection.ping();
    return { connection, proxy };
  }

  function direct(): Redis {
    const connection = server.client();
    connections.push(connection);
    return connection;
  }

  function lockClient(connection: Redis, prefix: string, errors: unknown[]): LockClient {
    const client = new LockClient(connection, { prefix });
    client.on('error', (error) => errors.push(error));
    clients.push(client);
    return client;
  }

  /** Loads the scripts on the server with a call that never waits (so no subscriber is made yet). */
  async function warm(client: LockClient): Promise<void> {
    const lease = await client.lock(uniqueName('warm')).tryAcquire();
    expect(lease).not.toBeNull();
    await lease!.release();
  }

  it('two locks first waited for during the subscriber handshake: both waiters get their hand-off', async () => {
    const latencyMs = 150;
    const prefix = uniqueName('hc');
    const errors: unknown[] = [];
    const holder = lockClient(direct(), prefix, errors);
    const { connection, proxy } = await proxied();
    const waiter = lockClient(connection, prefix, errors);
    await warm(waiter);
    proxy.setLatency(latencyMs);
    const [a, b] = [uniqueName('a'), uniqueName('b')];
    const held = await Promise.all([a, b].map((name) => holder.lock(name).acquire({ leaseMs: 30_000 })));
    // A's busy reply, one round trip (2 × latency) later, makes the subscriber connection; its
    // handshake takes two more round trips. B's busy reply lands in the middle of it.
    const waitingA = waiter.lock(a).acquire({ waitMs: 8_000 });
    await delay(2 * latencyMs);
    const waitingB = waiter.lock(b).acquire({ waitMs: 8_000 });
    // Both queued, and the subscriber settled (remade or not), long before the releases.
    await delay(12 * latencyMs);
    await Promise.all(held.map((lease) => lease.release()));
    const outcomes = await Promise.allSettled([waitingA, waitingB]);
    const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String(o.reason));
    // The holder's lease (30 s) is far past waitMs: only the hand-off can end these waits in time.
    expect({ failures, errors: errors.map(String) }).toEqual({ failures: [], errors: [] });
    for (const o of outcomes) if (o.status === 'fulfilled') await o.value.release();
  }, 30_000);

  it('100 tasks over 5 locks and 2 clients of one connection: every section runs, none times out', async () => {
    const latencyMs = 100;
    const prefix = uniqueName('hc');
    const errors: unknown[] = [];
    const { connection, proxy } = await proxied();
    const locks = [lockClient(connection, prefix, errors), lockClient(connection, prefix, errors)];
    await Promise.all(locks.map(warm));
    const admin = direct();
    const TASKS = 100;
    const SECTIONS = 5;
    const LOCKS = 5;
    const names = Array.from({ length: LOCKS }, (_, i) => uniqueName(`lock${i}`));
    const counterKey = (l: number) => `${prefix}:counter:${names[l]}`;
    const done = new Array<number>(TASKS).fill(0);
    const inside = new Array<number>(LOCKS).fill(0);
    let overlaps = 0;
    const failures: unknown[] = [];
    // Slow only while the subscribers connect: lock l's first waiters join l × latency after
    // the start, so on both clients some locks are joined during the subscriber handshake.
    proxy.setLatency(latencyMs);
    const fast = delay(10 * latencyMs).then(() => proxy.setLatency(0));
    await Promise.all(
      Array.from({ length: TASKS }, async (_, task) => {
        const client = locks[task % locks.length]!;
        await delay((task % LOCKS) * latencyMs);
        for (let s = 0; s < SECTIONS; s++) {
          const l = (task + s) % LOCKS;
          try {
            await client.lock(names[l]!).withLock(
              async () => {
                if (inside[l]!++ !== 0) overlaps++;
                // A read-modify-write across an await: two holders at once would lose an increment.
                const value = Number((await admin.get(counterKey(l))) ?? 0);
                await admin.set(counterKey(l), String(value + 1));
                inside[l]!--;
              },
              { waitMs: 10_000 },
            );
            done[task]!++;
          } catch (error) {
            failures.push(error);
            return;
          }
        }
      }),
    );
    await fast;
    expect(failures.filter((e) => e instanceof LockTimeoutError).map(String)).toEqual([]);
    expect(failures.map(String)).toEqual([]);
    expect(done).toEqual(new Array(TASKS).fill(SECTIONS));
    expect(overlaps).toBe(0);
    const counters = (await Promise.all(names.map((_, l) => admin.get(counterKey(l))))).map(Number);
    expect(counters).toEqual(new Array(LOCKS).fill((TASKS * SECTIONS) / LOCKS));
    expect(errors.map(String)).toEqual([]);
  }, 60_000);
});
