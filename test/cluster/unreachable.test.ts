import { LockClient, LockTimeoutError, RedisCommandError, RedisUnreachableError } from '@holdfast/core';
import { portOf } from '@holdfast/core/internal';
import { closedPort, clusterClient, nodeRedis, startRedisCluster, waitFor } from '@holdfast/test-utils';
import { Cluster } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * A Cluster client that reaches none of its nodes keeps every command in its
 * offline queue: each call used to wait its whole `commandTimeoutMs`, once
 * per retry, and end in a generic RedisTimeoutError ((retries + 1) × 20 s
 * here). Calls are refused at once instead, with an error that says so.
 * `commandTimeoutMs` is set high, so that "at once" is told apart from "after
 * a timeout" by a wide margin, whatever the machine's speed.
 */
const COMMAND_TIMEOUT_MS = 20_000;
/** Far below one command timeout, far above what a refusal takes (a few ms, plus retry backoff under 300 ms). */
const FAST_MS = COMMAND_TIMEOUT_MS / 2;

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

async function timed<T>(call: () => Promise<T>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

function expectUnreachable(error: unknown, status?: string): void {
  expect(error).toBeInstanceOf(RedisUnreachableError);
  expect(error).toBeInstanceOf(RedisCommandError);
  const e = error as RedisUnreachableError;
  expect(e.code).toBe('ERR_REDIS_UNREACHABLE');
  expect(e.message).toMatch(/^No node of the Redis Cluster is reachable/);
  if (status) expect(e.status).toBe(status);
}

describe('a Cluster with no reachable node', () => {
  // ioredis's own: a Cluster that reaches no startup node keeps trying (clusterRetryStrategy),
  // so calls are refused while it retries, and a wait goes on until its deadline. node-redis's
  // `connect()` makes one attempt and ends the client: its counterpart is the `status end` test
  // below, which runs on node-redis in the node-redis pass.
  it('startup nodes on ports nothing listens on: tryAcquire, acquire and withLock fail at once, saying so', async () => {
    const ports = [await closedPort(), await closedPort(), await closedPort()];
    const cluster = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
    cluster.on('error', () => undefined);
    closers.push(() => cluster.disconnect());
    const { locks } = lockClient(cluster);

    // The first call, made while the client's first connection attempt is under way.
    const first = await timed(() => locks.lock('a').tryAcquire());
    expectUnreachable(first.error);
    expect(first.ms).toBeLessThan(FAST_MS);

    const acquire = await timed(() => locks.lock('a').acquire());
    expectUnreachable(acquire.error);
    expect(acquire.ms).toBeLessThan(FAST_MS);

    const withLock = await timed(() => locks.lock('a').withLock(() => 'never'));
    expectUnreachable(withLock.error);
    expect(withLock.ms).toBeLessThan(FAST_MS);

    // With a wait deadline, retries go on until it ends (the cluster may come back), and the
    // LockTimeoutError says why through its cause.
    const waited = await timed(() => locks.lock('a').acquire({ waitMs: 500 }));
    expect(waited.error).toBeInstanceOf(LockTimeoutError);
    expectUnreachable((waited.error as LockTimeoutError).cause);
    expect(waited.ms).toBeLessThan(FAST_MS);
  }, 60_000);

  // ioredis's own: `lazyConnect` (status `wait` until a command), which node-redis has not (an
  // application connects its client itself). node-redis's counterpart, a Cluster whose
  // `connect()` was never called, is the next test; it runs in every pass.
  it('a lazyConnect client: its first call starts the connection and fails at once too', async () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: await closedPort() }], { lazyConnect: true });
    cluster.on('error', () => undefined);
    closers.push(() => cluster.disconnect());
    const { locks } = lockClient(cluster);
    expect(cluster.status).toBe('wait');

    const { error, ms } = await timed(() => locks.lock('l').tryAcquire());
    expectUnreachable(error);
    expect(ms).toBeLessThan(FAST_MS);
  }, 30_000);

  it('a node-redis Cluster whose connect() was never called is refused at once (status end), without retries', async () => {
    // `any`, as in clients/node-redis.test.ts: the harness types node-redis of either major loosely.
    const cluster: any = nodeRedis().createCluster({ rootNodes: [{ socket: { host: '127.0.0.1', port: await closedPort() } }] });
    cluster.on('error', () => undefined);
    const { locks } = lockClient(cluster);

    const { error, ms } = await timed(() => locks.lock('n').tryAcquire());
    expectUnreachable(error, 'end');
    expect(ms).toBeLessThan(FAST_MS);
  }, 30_000);

  // ioredis: its clusterRetryStrategy gives up; node-redis (the node-redis pass): its `connect()`
  // reached no root node, and it makes no other attempt. Either way the client has ended.
  it('a client that gave up connecting (status end) is refused at once, without retries', async () => {
    const cluster = clusterClient([{ host: '127.0.0.1', port: await closedPort() }], { clusterRetryStrategy: () => null });
    closers.push(() => cluster.disconnect());
    const { locks } = lockClient(cluster);
    await waitFor(() => portOf(cluster)!.status() === 'end', { timeoutMs: 10_000 });

    const { error, ms } = await timed(() => locks.lock('b').tryAcquire());
    expectUnreachable(error, 'end');
    expect((error as Error).message).toMatch(/gave up reconnecting/);
    expect(ms).toBeLessThan(FAST_MS);
  }, 30_000);

  it('a working cluster whose nodes were all killed: calls fail at once, saying no node is reachable', async () => {
    const fixture = await startRedisCluster(3);
    closers.push(() => fixture.stop());
    const cluster = fixture.client();
    const { locks } = lockClient(cluster);
    const lock = locks.lock('c');
    const lease = await lock.acquire({ leaseMs: 60_000 });
    expect(lease.isHeld).toBe(true);

    await Promise.all(fixture.servers.map((s) => s.kill()));
    // The client notices the connections close (no reply is waited for to learn it), as holdfast
    // reads it (ioredis's `status`; node-redis: none of the primaries' connections is ready).
    await waitFor(() => portOf(cluster)!.status() !== 'ready', { timeoutMs: 10_000 });

    const attempt = await timed(() => locks.lock('d').tryAcquire());
    expectUnreachable(attempt.error);
    expect(attempt.ms).toBeLessThan(FAST_MS);

    const extend = await timed(() => lease.extend());
    expectUnreachable(extend.error);
    expect(extend.ms).toBeLessThan(FAST_MS);
  }, 120_000);
});
