import { LockClient, RedisCommandError } from '@holdfast/core';
import { clientMode, commandStats, commandStatsDelta, startRedis, waitFor, type RedisServer } from '@holdfast/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Release wake-ups use sharded pub/sub where the server has it, classic pub/sub
 * where it does not. A server with SPUBLISH/SSUBSCRIBE renamed away stands in
 * for Redis 6 (it answers both as unknown commands, as Redis 6 does). A standalone GLIDE client
 * (the GLIDE pass) has no sharded pub/sub at all: its waiters go over classic pub/sub on Redis 7 too.
 */
const shardedStandalone = clientMode !== 'glide';
async function handOffOnce(server: RedisServer, name: string) {
  const admin = server.client();
  const a = new LockClient(server.client());
  const b = new LockClient(server.client());
  const errors: unknown[] = [];
  a.on('error', (e) => errors.push(e));
  b.on('error', (e) => errors.push(e));
  const before = await commandStats(admin);
  const held = await a.lock(name).acquire({ leaseMs: 30_000 });
  const waiting = b.lock(name).acquire({ waitMs: 10_000 });
  await waitFor(async () => (await admin.llen(b.lock(name).keys.queue)) === 1);
  const releasedAt = performance.now();
  await held.release();
  const next = await waiting;
  // Without the message the waiter would sleep out its whole 10 s wait.
  const wokeAfterMs = performance.now() - releasedAt;
  await next.release();
  const delta = commandStatsDelta(before, await commandStats(admin));
  await a.close();
  await b.close();
  admin.disconnect();
  return { wokeAfterMs, delta, errors, tokens: [held.token, next.token] };
}

describe('release wake-ups', () => {
  let modern: RedisServer;
  let legacy: RedisServer;
  beforeAll(async () => {
    [modern, legacy] = await Promise.all([
      startRedis(),
      startRedis({ args: ['--rename-command', 'SPUBLISH', '', '--rename-command', 'SSUBSCRIBE', '', '--rename-command', 'SUNSUBSCRIBE', ''] }),
    ]);
  });
  afterAll(async () => {
    await modern?.stop();
    await legacy?.stop();
  });

  it(`go over ${shardedStandalone ? 'sharded' : 'classic'} pub/sub on Redis 7`, async () => {
    const run = await handOffOnce(modern, 'sharded');
    expect(run.errors).toEqual([]);
    expect(run.wokeAfterMs).toBeLessThan(5_000);
    expect(run.tokens[1]).toBeGreaterThan(run.tokens[0]!);
    if (shardedStandalone) {
      expect(run.delta['ssubscribe']).toBe(1);
      expect(run.delta['spublish']).toBeGreaterThanOrEqual(1);
      expect(run.delta['subscribe'] ?? 0).toBe(0);
      expect(run.delta['publish'] ?? 0).toBe(0);
    } else {
      // GLIDE: the sharded subscribe is refused in the client (never sent); the release also
      // PUBLISHes, as the server has a classic subscriber of the channel.
      expect(run.delta['ssubscribe'] ?? 0).toBe(0);
      expect(run.delta['subscribe']).toBe(1);
      expect(run.delta['publish']).toBeGreaterThanOrEqual(1);
    }
  });

  it('fall back to classic pub/sub, on both sides, where the server lacks sharded pub/sub', async () => {
    const run = await handOffOnce(legacy, 'classic');
    expect(run.errors).toEqual([]);
    expect(run.wokeAfterMs).toBeLessThan(5_000);
    expect(run.tokens[1]).toBeGreaterThan(run.tokens[0]!);
    expect(run.delta['subscribe']).toBe(1);
    expect(run.delta['publish']).toBeGreaterThanOrEqual(1);
  });

  it('wake waiters once the subscriber is back when a release was published while it reconnected', async () => {
    const admin = modern.client();
    const a = new LockClient(modern.client());
    const b = new LockClient(modern.client());
    const held = await a.lock('reconnect').acquire({ leaseMs: 30_000 });
    const waiting = b.lock('reconnect').acquire({ waitMs: 10_000 });
    await waitFor(async () => (await admin.llen(b.lock('reconnect').keys.queue)) === 1);
    // The subscriber is cut off, and the release goes out before it can reconnect.
    await admin.client('KILL', 'TYPE', 'PUBSUB');
    const releasedAt = performance.now();
    await held.release();
    const next = await waiting;
    // Without the re-check, the waiter would sleep out the 10 s it may wait.
    expect(performance.now() - releasedAt).toBeLessThan(5_000);
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
    await a.close();
    await b.close();
    admin.disconnect();
  });
});

describe('pub/sub connection failures', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(() => server.stop());

  it('reach error listeners as holdfast errors', async () => {
    const a = new LockClient(server.client());
    const b = new LockClient(server.client());
    const errors: unknown[] = [];
    a.on('error', (e) => errors.push(e));
    b.on('error', (e) => errors.push(e));
    const held = await a.lock('pubsub-failure').acquire({ leaseMs: 60_000 });
    // A waiter subscribes to the lock's channel: holdfast's own pub/sub connection is up.
    const waiting = b.lock('pubsub-failure').acquire({ waitMs: 60_000 }).catch((e: unknown) => e);
    const admin = server.client();
    const channel = b.lock('pubsub-failure').keys.channel;
    const count = shardedStandalone ? 'SHARDNUMSUB' : 'NUMSUB';
    await waitFor(async () => ((await admin.call('PUBSUB', count, channel)) as [string, number])[1] === 1);
    server.kill();
    await waitFor(() => errors.length > 0, { timeoutMs: 20_000 });
    await server.restart();
    await b.close();
    await waiting;
    await a.close();
    void held;
    expect(errors.length).toBeGreaterThan(0);
    for (const error of errors) {
      expect(error).toBeInstanceOf(RedisCommandError);
      expect((error as RedisCommandError).code).toMatch(/^ERR_REDIS/);
    }
  });
});
