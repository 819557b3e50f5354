import { LockClient, ReplicationError, type Lease } from '@holdfast/core';
import { glideProbe, startRedis, uniqueName, waitFor, type RedisServer } from '@holdfast/test-utils';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passFlavour } from './client-differences.js';

/**
 * What only GLIDE has, in the GLIDE pass (HOLDFAST_CLIENT=glide), where `server.client()` is a GLIDE
 * twin (test/src/glide-twin.ts) and the port contract runs in standalone.test.ts: the end-to-end
 * hand-off over classic pub/sub, the WAIT of `minReplicas` past GLIDE's `requestTimeout`, and
 * that `requestTimeout` under holdfast's `commandTimeoutMs`. The other passes check that they are not that pass.
 */
const once = passFlavour === 'glide';
let server: RedisServer;
let admin: Redis;

if (once) {
  beforeAll(async () => {
    server = await startRedis();
    admin = server.client();
  });

  afterAll(async () => {
    await server?.stop();
  });

  // End to end on GLIDE: a waiter woken by the holder's release. A standalone GLIDE client has no
  // sharded pub/sub: the waiter's SSUBSCRIBE is refused as an unknown command, Waiters switches
  // to classic pub/sub, and the scripts PUBLISH.
  describe('locks over GLIDE', () => {
    it('a waiter on another GLIDE client gets the lock when the holder releases it (classic pub/sub)', async () => {
      const [a, b] = [server.client(), server.client()];
      const [holders, waiters] = [new LockClient(a), new LockClient(b)];
      const name = uniqueName('glide:handoff');
      try {
        const held = await holders.lock(name).acquire({ waitMs: 5_000 });
        const waiting = waiters.lock(name).acquire({ waitMs: 20_000 });
        const channels = async () => (await admin.call('PUBSUB', 'CHANNELS', '*')) as string[];
        await waitFor(async () => (await channels()).some((channel) => channel.includes(name)), { message: 'the waiter never subscribed' });
        await held.release();
        const lease = await waiting;
        expect(lease.holdCount).toBe(1);
        await lease.release();
      } finally {
        await holders.close();
        await waiters.close();
      }
    });
  });

  // GLIDE would cut a WAIT at its requestTimeout (250 ms by default): the batch that carries a
  // grant and its WAIT gets a timeout of its own, so a wait for replicas longer than that is
  // answered by the server (here: no replica, 0 acknowledgements after replicaTimeoutMs).
  it('a WAIT for minReplicas longer than requestTimeout: answered (ReplicationError), not cut by GLIDE', async () => {
    const glide = server.client();
    const locks = new LockClient(glide, { minReplicas: 1, replicaTimeoutMs: 600 });
    const name = uniqueName('glide:wait');
    try {
      const error = await locks.lock(name).tryAcquire().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplicationError);
      expect(error).toMatchObject({ acknowledged: 0, required: 1, timeoutMs: 600 });
      expect(glideProbe(glide).rejections.map((e) => e.constructor.name)).not.toContain('TimeoutError');
      // The grant short of its replicas was undone.
      expect(await locks.lock(name).isLocked()).toBe(false);
    } finally {
      await locks.close();
    }
  });

  /**
   * GLIDE fails a request at its own `requestTimeout` (250 ms by default, 100 here), before
   * holdfast's `commandTimeoutMs`, and the request may still run at the server afterwards: core
   * retries it (RedisTimeoutError is transient), so a frozen server receives the same acquire or
   * release several times and runs them all once it resumes. Each attempt carries the call's
   * request id, which makes a repeated acquire a no-op and a repeated release harmless.
   */
  describe('GLIDE requestTimeout under commandTimeoutMs: requests GLIDE gave up on that still ran', () => {
    const frozenUntilGlideTimesOut = async (client: object, run: () => Promise<unknown>) => {
      const probe = glideProbe(client);
      const before = probe.rejections.filter((e) => e.constructor.name === 'TimeoutError').length;
      server.pause();
      const running = run();
      running.catch(() => undefined);
      try {
        await waitFor(() => probe.rejections.filter((e) => e.constructor.name === 'TimeoutError').length >= before + 2, {
          timeoutMs: 10_000,
          message: 'GLIDE gave up on no request',
        });
      } finally {
        server.resume();
      }
      return running;
    };

    it('an acquire GLIDE gave up on, resent and run late: one hold (one release frees the lock)', async () => {
      const glide = server.client({ commandTimeout: 100 });
      // Connected before the server freezes, as an application's client is.
      await (glide as unknown as { customCommand(a: string[]): Promise<unknown> }).customCommand(['PING']);
      const locks = new LockClient(glide, { commandTimeoutMs: 3_000 });
      const others = new LockClient(admin);
      const name = uniqueName('glide:late-acquire');
      try {
        const lease = (await frozenUntilGlideTimesOut(glide, () => locks.lock(name).acquire({ waitMs: 20_000 }))) as Lease;
        expect(lease.holdCount).toBe(1);
        expect(await others.lock(name).tryAcquire()).toBeNull();
        await lease.release();
        const next = await others.lock(name).tryAcquire();
        expect(next?.holdCount).toBe(1);
        await next!.release();
      } finally {
        await locks.close();
        await others.close();
      }
    });

    it('a release GLIDE gave up on, resent and run late: the lock is free, nothing fails', async () => {
      const glide = server.client({ commandTimeout: 100 });
      const locks = new LockClient(glide, { commandTimeoutMs: 3_000 });
      const others = new LockClient(admin);
      const name = uniqueName('glide:late-release');
      try {
        const lease = await locks.lock(name).acquire({ waitMs: 5_000 });
        await frozenUntilGlideTimesOut(glide, () => lease.release());
        const next = await others.lock(name).tryAcquire();
        expect(next?.holdCount).toBe(1);
        await next!.release();
      } finally {
        await locks.close();
        await others.close();
      }
    });
  });
} else {
  describe('Valkey GLIDE 2.5', () => {
    it('runs in the GLIDE pass only', () => {
      expect(passFlavour).not.toBe('glide');
    });
  });
}
