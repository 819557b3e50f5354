import { LockClient, LockTimeoutError, RedisCommandError, RedisTimeoutError, RedisUnreachableError } from '@holdfast/core';
import { portOf } from '@holdfast/core/workspace';
import { clientMode, closedPort, clusterClient, glideProbe, nodeRedis, startRedisCluster, waitFor } from '@holdfast/test-utils';
import { Cluster } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * A Cluster client that reaches none of its nodes keeps every command in its
 * offline queue: each call used to wait its whole `commandTimeoutMs`, once
 * per retry, and end in a generic RedisTimeoutError. Calls are refused at
 * once instead, with an error that says so. `commandTimeoutMs` is longer than
 * each test's own timeout: a call that waited for it fails the test, and one
 * that ended by a timeout is no RedisUnreachableError, so no wall-clock
 * threshold is needed to tell "at once" from "after a timeout".
 */
const COMMAND_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = 30_000;

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function lockClient(cluster: ConstructorParameters<typeof LockClient>[0]): { locks: LockClient; errors: unknown[] } {
  const locks = new LockClient(cluster, { prefix: 'unreachable', commandTimeoutMs: COMMAND_TIMEOUT_MS });
  const errors: unknown[] = [];
  locks.on('error', (e) => errors.push(e));
  closers.push(() => locks.close());
  return { locks, errors };
}

/** The error `call` rejects with (undefined if it resolves). */
async function failure<T>(call: () => Promise<T>): Promise<unknown> {
  return call().then(
    () => undefined,
    (e: unknown) => e,
  );
}

/**
 * GLIDE (the GLIDE pass): `GlideClusterClient.createClient()` rejects (ClosingError) when it
 * reaches no node, so an application has no client to hand holdfast; the harness's twin hands
 * holdfast the client that never came, and every call meets GLIDE's ClosingError: refused at
 * once, status `end`.
 */
const glide = clientMode === 'glide';

function expectUnreachable(error: unknown, status?: string): void {
  expect(error).toBeInstanceOf(RedisUnreachableError);
  expect(error).toBeInstanceOf(RedisCommandError);
  const e = error as RedisUnreachableError;
  expect(e.code).toBe('ERR_REDIS_UNREACHABLE');
  // GLIDE: core's words once the port's status is `end`; GLIDE's reason for a call that met the ClosingError first.
  expect(e.message).toMatch(glide ? /^No node of the Redis Cluster is reachable|^The GLIDE client is closed \(Connection error: Cluster\(Failed to create initial connections/ : /^No node of the Redis Cluster is reachable/);
  if (status) expect(e.status).toBe(status);
}

describe('a Cluster with no reachable node', () => {
  // ioredis: a Cluster that reaches no startup node keeps trying (clusterRetryStrategy), so calls
  // are refused while it retries. node-redis (the node-redis pass): the harness calls `connect()`
  // as the client is made, so the first call arrives while it is under way; it reaches no root
  // node, and node-redis closes the Cluster with no event, which holdfast must notice all the same.
  it('startup nodes on ports nothing listens on: tryAcquire, acquire and withLock fail at once, saying so', async () => {
    const ports = [await closedPort(), await closedPort(), await closedPort()];
    const cluster = clusterClient(ports.map((port) => ({ host: '127.0.0.1', port })));
    closers.push(() => cluster.disconnect());
    const { locks } = lockClient(cluster);

    // The first call, made while the client's first connection attempt is under way.
    expectUnreachable(await failure(() => locks.lock('a').tryAcquire()));
    expectUnreachable(await failure(() => locks.lock('a').acquire()));
    expectUnreachable(await failure(() => locks.lock('a').withLock(() => 'never')));

    const waited = await failure(() => locks.lock('a').acquire({ waitMs: 500 }));
    if (glide) {
      // GLIDE's createClient() rejected: there is no client, and an ended one is not waited for.
      expect(glideProbe(cluster).rejections[0]?.constructor.name).toBe('ClosingError');
      expect(portOf(cluster)!.status()).toBe('end');
      expectUnreachable(waited, 'end');
    } else if (clientMode === 'node-redis') {
      // Its `connect()` failed, and it makes no other attempt: an ended client is not waited for.
      expect(portOf(cluster)!.status()).toBe('end');
      expectUnreachable(waited, 'end');
    } else {
      // With a wait deadline, retries go on until it ends (the cluster may come back), and the
      // LockTimeoutError says why through its cause.
      expect(waited).toBeInstanceOf(LockTimeoutError);
      expectUnreachable((waited as LockTimeoutError).cause);
    }
  }, TEST_TIMEOUT_MS);

  // ioredis's own: `lazyConnect` (status `wait` until a command), which node-redis has not (an
  // application connects its client itself). node-redis's counterpart, a Cluster whose
  // `connect()` was never called, is the next test; it runs in every pass.
  it('a lazyConnect client: its first call starts the connection and fails at once too', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: await closedPort() }], { lazyConnect: true });
    cluster.on('error', () => undefined);
    closers.push(() => cluster.disconnect());
    const { locks } = lockClient(cluster);
    expect(cluster.status).toBe('wait');

    expectUnreachable(await failure(() => locks.lock('l').tryAcquire()));
  }, TEST_TIMEOUT_MS);

  it('a node-redis Cluster whose connect() was never called is refused at once (status end), without retries', async () => {
    // `any`, as in clients/node-redis.test.ts: the harness types node-redis of either major loosely.
    const cluster: any = nodeRedis().createCluster({ rootNodes: [{ socket: { host: '127.0.0.1', port: await closedPort() } }] });
    cluster.on('error', () => undefined);
    const { locks } = lockClient(cluster);

    expectUnreachable(await failure(() => locks.lock('n').tryAcquire()), 'end');
  }, TEST_TIMEOUT_MS);

  // ioredis: its clusterRetryStrategy gives up; node-redis (the node-redis pass): its `connect()`
  // reached no root node, and it makes no other attempt. Either way the client has ended.
  it('a client that gave up connecting (status end) is refused at once, without retries', async () => {
    const cluster = clusterClient([{ host: '127.0.0.1', port: await closedPort() }], { clusterRetryStrategy: () => null });
    closers.push(() => cluster.disconnect());
    const { locks } = lockClient(cluster);
    await waitFor(() => portOf(cluster)!.status() === 'end', { timeoutMs: 10_000 });

    const error = await failure(() => locks.lock('b').tryAcquire());
    expectUnreachable(error, 'end');
    // GLIDE has no strategy that gives up: its only ended Cluster client is one never made (above).
    expect((error as Error).message).toMatch(glide ? /gave up reconnecting|Failed to create initial connections/ : /gave up reconnecting/);
  }, TEST_TIMEOUT_MS);

  it(`a working cluster whose nodes were all killed: calls fail ${glide ? "at GLIDE's request timeout, typed" : 'at once, saying no node is reachable'}`, async () => {
    const fixture = await startRedisCluster(3);
    closers.push(() => fixture.stop());
    const cluster = fixture.client();
    const { locks } = lockClient(cluster);
    const lock = locks.lock('c');
    const lease = await lock.acquire({ leaseMs: 60_000 });
    expect(lease.isHeld).toBe(true);

    await Promise.all(fixture.servers.map((s) => s.kill()));
    if (glide) {
      // GLIDE has no connection state to read: each attempt fails at its requestTimeout (250 ms)
      // or with the connection (ConnectionError), and core retries it as transient. The call ends
      // with a typed error of the last attempt, long before holdfast's commandTimeoutMs.
      for (const call of [() => locks.lock('d').tryAcquire(), () => lease.extend()] as (() => Promise<unknown>)[]) {
        const started = performance.now();
        const error = await failure(call);
        expect(performance.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS);
        expect(error).toBeInstanceOf(error instanceof RedisTimeoutError ? RedisTimeoutError : RedisCommandError);
        expect((error as RedisCommandError).code).toMatch(/^ERR_REDIS/);
      }
      return;
    }
    // The client notices the connections close (no reply is waited for to learn it), as holdfast
    // reads it (ioredis's `status`; node-redis: none of the primaries' connections is ready).
    await waitFor(() => portOf(cluster)!.status() !== 'ready', { timeoutMs: 10_000 });

    expectUnreachable(await failure(() => locks.lock('d').tryAcquire()));
    expectUnreachable(await failure(() => lease.extend()));
  }, 120_000);
});
