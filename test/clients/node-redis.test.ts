import { KeyConflictError, LockClient, RedisTimeoutError, RedisUnreachableError, fencedWrite, readFenced } from '@holdfast/core';
import { lockKeys, portOf } from '@holdfast/core/workspace';
import { Redlock } from '@holdfast/redlock';
import {
  FaultProxy,
  closedPort,
  nodeRedis,
  startRedis,
  startRedisServers,
  uniqueName,
  waitFor,
  type NodeRedisAny,
  type RedisServer,
} from '@holdfast/test-utils';
import { Watchdog } from '@holdfast/watchdog';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * node-redis (the `redis` package) handed to holdfast as it is: `createClient()` of node-redis 5
 * and 6 (the `redis6` alias), RESP2 and RESP3, the application's own use of the client going on
 * beside holdfast, and the faults as node-redis meets them (its reconnect and resend behaviour
 * differs from ioredis's: see test/README.md). Clusters (test/cluster) and Sentinels
 * (test/replication/sentinel.client.test.ts) run on node-redis, as does the whole suite, in the
 * node-redis passes; this file runs once.
 */
const majors = ['5', '6'] as const;

const opened: NodeRedisAny[] = [];
async function connect(server: { host: string; port: number }, major: '5' | '6', options: Record<string, unknown> = {}): Promise<any> {
  const { socket, ...rest } = options as { socket?: object };
  const client = nodeRedis(major).createClient({ socket: { host: server.host, port: server.port, ...socket }, ...rest });
  client.on('error', () => undefined);
  opened.push(client);
  await client.connect();
  return client;
}

let server: RedisServer;
let durable: RedisServer;
let redlockServers: RedisServer[];
beforeAll(async () => {
  [server, durable, redlockServers] = await Promise.all([startRedis(), startRedis({ persistent: true }), startRedisServers(3)]);
}, 60_000);
afterAll(async () => {
  for (const client of opened.splice(0)) if (client.isOpen) client.destroy?.();
  await Promise.all([server, durable, ...(redlockServers ?? [])].filter(Boolean).map((s) => s.stop()));
});

describe('ioredis, for comparison', () => {
  it('a reply lost on the way back: ioredis resends the command after reconnecting, so it runs twice', async () => {
    const proxy = await FaultProxy.start(server);
    try {
      const redis = server.client({ host: proxy.host, port: proxy.port });
      const counter = uniqueName('counter');
      await redis.ping();
      const dropped = proxy.dropNextReply();
      const reply = await redis.incr(counter);
      await dropped;
      // autoResendUnfulfilledCommands (its default): the caller sees the second run's reply.
      expect(reply).toBe(2);
      expect(await server.client().get(counter)).toBe('2');
    } finally {
      await proxy.close();
    }
  });
});

describe.each(majors)('node-redis %s', (major) => {
  it.each([2, 3])('createClient() with RESP%i as it is: re-entry, hand-off over pub/sub, fencing, watchdog', async (resp) => {
    const a = new LockClient(await connect(server, major, { RESP: resp }), { prefix: uniqueName('nr') });
    const b = new LockClient(await connect(server, major, { RESP: resp }), { prefix: a.options.prefix });
    const errors: unknown[] = [];
    a.on('error', (error) => errors.push(error));
    b.on('error', (error) => errors.push(error));
    const name = uniqueName('job');
    const counts = await a.lock(name).withLock(async (outer) => {
      const inner = await a.lock(name).acquire();
      await inner.release();
      return [outer.holdCount, inner.holdCount];
    });
    expect(counts).toEqual([1, 2]);

    const direct = await connect(server, major, { RESP: resp });
    const held = await a.lock(name).acquire({ leaseMs: 60_000 });
    const waiting = b.lock(name).acquire({ waitMs: 20_000, leaseMs: 10_000 });
    await waitFor(async () => (await direct.exists(lockKeys(a.options.prefix, name).queue)) === 1);
    await held.release();
    // Woken by the release message long before the 60 s lease could end.
    const next = await waiting;
    expect(next.token).toBeGreaterThan(held.token);
    const key = uniqueName('fenced');
    expect(await fencedWrite(direct, key, next.token, 'new')).toBe(true);
    expect(await fencedWrite(direct, key, held.token, 'stale')).toBe(false);
    expect(await readFenced(direct, key)).toEqual({ token: next.token, value: 'new' });
    await next.release();

    const watchdog = new Watchdog(a, { timeoutMs: 300 });
    let ticks = 0;
    watchdog.on('renewed', ({ count }) => (ticks += count));
    const renewed = await a.lock(uniqueName('wd')).acquire();
    // Renewed past several of its 300 ms leases.
    await waitFor(() => ticks >= 4);
    expect(renewed.signal.aborted).toBe(false);
    expect(await a.lock(renewed.name).isLocked()).toBe(true);
    await renewed.release();
    await watchdog.stop();
    await a.close();
    await b.close();
    expect(errors).toEqual([]);
  });

  it('leaves the application client as it was: its commands and its own subscriptions work, it is never closed', async () => {
    const redis = await connect(server, major);
    const publisher = await connect(server, major);
    const subscriber = redis.duplicate();
    subscriber.on('error', () => undefined);
    opened.push(subscriber);
    await subscriber.connect();
    const heard: string[] = [];
    await subscriber.subscribe('app-channel', (message: string) => heard.push(message));
    const locks = new LockClient(redis, { prefix: uniqueName('nr') });
    const other = new LockClient(publisher, { prefix: locks.options.prefix });
    const lease = await locks.lock('shared').acquire();
    const waiting = other.lock('shared').acquire({ waitMs: 10_000 });
    await redis.set('app-key', 'app-value');
    await lease.release();
    await (await waiting).release();
    await locks.close();
    await other.close();
    // Its own commands and subscription still work, and it is still open: holdfast only closes what it opened.
    expect(redis.isOpen).toBe(true);
    expect(await redis.get('app-key')).toBe('app-value');
    await publisher.publish('app-channel', 'hello');
    await waitFor(() => heard.includes('hello'));
    // holdfast's subscriber was a duplicate of its own: closed with the LockClient.
    const clients = String(await redis.sendCommand(['CLIENT', 'LIST']));
    expect(clients.split('\n').filter((line: string) => / ssub=[1-9]/.test(line))).toEqual([]);
  });

  it('is detected once per client, as node-redis', async () => {
    const redis = await connect(server, major);
    expect(portOf(redis)?.kind).toBe('node-redis');
    expect(portOf(redis)).toBe(portOf(redis));
  });

  it('maps node-redis errors to typed errors: a closed client, a stalled server, a key of another type', async () => {
    const closed = await connect(server, major);
    const locks = new LockClient(closed, { prefix: uniqueName('nr'), retries: 0 });
    closed.destroy();
    const refused = await locks.lock('x').tryAcquire().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RedisUnreachableError);
    expect((refused as RedisUnreachableError).status).toBe('end');
    await locks.close();

    const own = await startRedis();
    try {
      const redis = await connect(own, major);
      const stalled = new LockClient(redis, { prefix: uniqueName('nr'), commandTimeoutMs: 300, retries: 0 });
      await (await stalled.lock('warm').acquire()).release();
      own.pause();
      const error = await stalled.lock('y').tryAcquire().catch((e: unknown) => e);
      own.resume();
      expect(error).toBeInstanceOf(RedisTimeoutError);
      // The same client works again once the server does.
      await (await stalled.lock('y').acquire()).release();

      const conflict = lockKeys(stalled.options.prefix, 'z').lock;
      await redis.set(conflict, 'not a lock hash');
      await expect(stalled.lock('z').acquire()).rejects.toBeInstanceOf(KeyConflictError);
      await stalled.close();
    } finally {
      own.resume();
      await own.stop();
    }
  });

  // `commandTimeoutMs` is longer than the test's own timeout: a call that waited for it fails the
  // test, and one that ended by a timeout is no RedisUnreachableError.
  it('a client to a port nothing listens on, that does not reconnect: a call while connect() is under way, and after it failed, is refused with RedisUnreachableError', async () => {
    const client: any = nodeRedis(major).createClient({
      socket: { host: '127.0.0.1', port: await closedPort(), reconnectStrategy: false },
    });
    client.on('error', () => undefined);
    const connecting = client.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    const locks = new LockClient(client, { prefix: uniqueName('nr'), commandTimeoutMs: 60_000 });
    locks.on('error', () => undefined);
    try {
      expect(client.isOpen).toBe(true);
      expect(portOf(client)!.status()).toBe('connecting');
      const during = await locks.lock('x').tryAcquire().catch((e: unknown) => e);
      expect(during).toBeInstanceOf(RedisUnreachableError);
      expect((during as RedisUnreachableError).code).toBe('ERR_REDIS_UNREACHABLE');
      expect((during as RedisUnreachableError).status).toBe('end');

      expect(await connecting).toBeInstanceOf(Error);
      expect(client.isOpen).toBe(false);
      const after = await locks.lock('x').acquire().catch((e: unknown) => e);
      expect(after).toBeInstanceOf(RedisUnreachableError);
      expect((after as RedisUnreachableError).status).toBe('end');
    } finally {
      await locks.close();
    }
  }, 30_000);

  it('after a kill and restart: the held lease is renewed again, scripts are sent again, waiters are woken', async () => {
    const a = new LockClient(await connect(durable, major), { prefix: uniqueName('nr') });
    const b = new LockClient(await connect(durable, major), { prefix: a.options.prefix });
    const watchdog = new Watchdog(a, { timeoutMs: 2_000 });
    const lost: string[] = [];
    a.on('lost', ({ name }) => lost.push(name));
    const held = await a.lock('kept').acquire();
    await durable.kill();
    await durable.restart();
    // The script cache is gone with the process: the next calls fall back to EVAL.
    const direct = await connect(durable, major);
    const waiting = b.lock('kept').acquire({ waitMs: 20_000 });
    await waitFor(async () => (await direct.exists(lockKeys(a.options.prefix, 'kept').queue)) === 1, { timeoutMs: 10_000 });
    await held.release();
    await (await waiting).release();
    expect(lost).toEqual([]);
    await watchdog.stop();
    await a.close();
    await b.close();
  });

  it('after SCRIPT FLUSH: acquisitions and the watchdog\'s renewals send the scripts again', async () => {
    const redis = await connect(server, major);
    const locks = new LockClient(redis, { prefix: uniqueName('nr') });
    const watchdog = new Watchdog(locks, { timeoutMs: 300 });
    const leases = await Promise.all(['a', 'b', 'c'].map((n) => locks.lock(n).acquire()));
    await redis.sendCommand(['SCRIPT', 'FLUSH']);
    let renewed = 0;
    watchdog.on('renewed', ({ count }) => (renewed += count));
    await waitFor(() => renewed >= 6, { timeoutMs: 5_000 });
    expect(leases.every((lease) => !lease.signal.aborted)).toBe(true);
    await redis.sendCommand(['SCRIPT', 'FLUSH']);
    const more = await locks.lock('d').acquire();
    for (const lease of [...leases, more]) await lease.release();
    await watchdog.stop();
    await locks.close();
  });

  it('a stopped server (SIGSTOP): a node-redis command waits, with no timeout of its own, and is answered after SIGCONT', async () => {
    const own = await startRedis();
    try {
      const redis = await connect(own, major);
      own.pause();
      const reply = redis.sendCommand(['PING']);
      const first = await Promise.race([reply, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1_000))]);
      own.resume();
      expect(first).toBe('still waiting');
      expect(await reply).toBe('PONG');
    } finally {
      own.resume();
      await own.stop();
    }
  });

  it('a reply lost on the way back (dropped-reply proxy): node-redis fails the call and does not resend it', async () => {
    const proxy = await FaultProxy.start(server);
    try {
      const redis = await connect({ host: proxy.host, port: proxy.port }, major);
      const direct = await connect(server, major);
      const counter = uniqueName('counter');
      await redis.sendCommand(['PING']);
      const dropped = proxy.dropNextReply();
      const outcome = await redis.sendCommand(['INCR', counter]).then(
        () => 'answered',
        (error: Error) => `${error.constructor.name}: ${error.message}`,
      );
      await dropped;
      // Applied once, failed to the caller, not sent again after the reconnection (ioredis resends it).
      expect(outcome).toBe('SocketClosedUnexpectedlyError: Socket closed unexpectedly');
      await waitFor(() => redis.isReady);
      expect(await direct.get(counter)).toBe('1');
    } finally {
      await proxy.close();
    }
  });

  it('a re-entry whose reply is lost: holdfast retries it, and Redis counts it once', async () => {
    const proxy = await FaultProxy.start(server);
    try {
      const redis = await connect({ host: proxy.host, port: proxy.port }, major);
      const direct = await connect(server, major);
      const locks = new LockClient(redis, { prefix: uniqueName('nr') });
      const name = 'dropped';
      const key = lockKeys(locks.options.prefix, name).lock;
      await locks.lock(name).withLock(async (outer) => {
        const dropped = proxy.dropNextReply();
        const inner = await locks.lock(name).acquire();
        await dropped;
        expect([outer.holdCount, inner.holdCount]).toEqual([1, 2]);
        // The inner release leaves the outer hold: the retried re-entry was not counted twice.
        await inner.release();
        expect(await direct.exists(key)).toBe(1);
      });
      expect(await direct.exists(key)).toBe(0);
      await locks.close();
    } finally {
      await proxy.close();
    }
  });

  it('Redlock over node-redis clients (and a mix with ioredis)', async () => {
    const clients = await Promise.all(redlockServers.map((s) => connect(s, major)));
    const redlock = new Redlock([clients[0], clients[1], redlockServers[2]!.client()]);
    const other = new Redlock(clients);
    const lease = await redlock.lock('rl').acquire();
    const waiting = other.lock('rl').acquire({ waitMs: 10_000 });
    await lease.release();
    await (await waiting).release();
    await redlock.close();
    await other.close();
  });
});
